/**
 * HTML to readable text for web/fetch and search snippets: headings, paragraphs and list
 * items as lines, links as `text [absolute url]`, entities decoded, whitespace collapsed;
 * scripts, styles, navigation, images and the head left out. Built on html-to-text, which
 * is plain JavaScript over htmlparser2 and so runs in workerd as well as in Node.
 */
import { compile, type FormatCallback, type FormatOptions, type HtmlToTextOptions } from 'html-to-text';

const DROPPED = ['head', 'script', 'style', 'noscript', 'template', 'nav', 'svg', 'canvas', 'iframe', 'object', 'img'];

/** A heading as a Markdown-like line, so the model sees the page's outline. */
const heading: FormatCallback = (elem, walk, builder) => {
  const level = Number(/^h([1-6])$/.exec(elem.name ?? '')?.[1] ?? 1);
  builder.openBlock({ leadingLineBreaks: 2 });
  builder.addInline(`${'#'.repeat(level)} `);
  walk(elem.children, builder);
  builder.closeBlock({ trailingLineBreaks: 2 });
};

/** Page metadata handed to the link rewriter: the address relative links resolve against. */
interface PageMeta {
  url?: string;
}

// Only http(s) targets are worth showing: the model can pass them to web/fetch. Anything
// else (mailto:, javascript:, fragments of this page) keeps its text and loses its href.
// The third argument, the anchor element, is passed by html-to-text but not in its types.
const rewriteHref = ((_path: string, meta: PageMeta | undefined, elem?: { attribs?: Record<string, string> }) => {
  const raw = elem?.attribs?.href?.trim() ?? '';
  if (raw === '' || raw.startsWith('#')) return '';
  try {
    const target = meta?.url ? new URL(raw, meta.url) : new URL(raw);
    return target.protocol === 'http:' || target.protocol === 'https:' ? target.href : '';
  } catch {
    return '';
  }
}) as FormatOptions['pathRewrite'];

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  formatters: { heading },
  selectors: [
    ...DROPPED.map((selector) => ({ selector, format: 'skip' })),
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'heading' })),
    { selector: 'ul', options: { itemPrefix: '- ' } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 60 } },
    { selector: 'a', options: { pathRewrite: rewriteHref, hideLinkHrefIfSameAsText: true } },
  ],
};

// compile() builds the selector decision tree once; its function takes the metadata that
// the link rewriter reads, which the published types leave out.
const pageText = compile(OPTIONS) as (html: string, meta?: PageMeta) => string;

const fragmentText = compile({
  ...OPTIONS,
  selectors: [...(OPTIONS.selectors ?? []), { selector: 'a', options: { ignoreHref: true } }],
});

/** The readable text of an HTML document; `url` is where it came from, for relative links. */
export function htmlToReadableText(html: string, url?: string): string {
  return tidy(pageText(html, url === undefined ? {} : { url }));
}

/** One line of text from an HTML fragment, such as a search result's highlighted snippet. */
export function htmlFragmentToLine(html: string): string {
  return fragmentText(html).replace(/\s+/g, ' ').trim();
}

/** Trims line ends and keeps at most one empty line between blocks. */
export function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
