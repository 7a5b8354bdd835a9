/**
 * The console's stylesheet, served as /console/console.css (the Content-Security-Policy
 * takes no inline style). Readable at a laptop's width and a phone's: below 700 px the
 * lists become cards and the facts stack.
 */

/** The stylesheet's text. */
export const CONSOLE_STYLE = String.raw`
:root { --fg: #1d1f23; --muted: #5f6670; --line: #dde1e6; --bg: #fff; --soft: #f5f6f8;
  --blue: #1f5fbf; --green: #1d7a3e; --red: #b3261e; --amber: #8a5a00; --violet: #6b3fa0;
  color-scheme: light; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--blue); }
.mono, code, pre, .output, .source { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 13px; }
.muted { color: var(--muted); }
.problem { color: var(--red); background: #fdf0ef; border: 1px solid #f2c9c5; padding: .5em .75em; border-radius: 6px; }
header.top { display: flex; align-items: center; gap: 1.25em; padding: .6em 1.25em; border-bottom: 1px solid var(--line); background: var(--soft); flex-wrap: wrap; }
header.top .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
header.top nav { display: flex; gap: 1em; flex: 1; }
header.top nav a { text-decoration: none; color: var(--muted); padding: .2em 0; }
header.top nav a[aria-current=page] { color: var(--fg); border-bottom: 2px solid var(--blue); }
.count { display: inline-block; min-width: 1.4em; margin-left: .3em; padding: 0 .4em; border-radius: 1em; background: var(--amber); color: #fff; font-size: 12px; text-align: center; }
main { max-width: 1200px; margin: 0 auto; padding: 1em 1.25em 3em; }
h1 { font-size: 1.5em; margin: .4em 0; overflow-wrap: anywhere; }
h2 { font-size: 1.1em; margin: 1.6em 0 .5em; }
.crumbs { margin: 0; color: var(--muted); overflow-wrap: anywhere; }
button { font: inherit; padding: .35em .9em; border: 1px solid var(--blue); background: var(--blue); color: #fff; border-radius: 6px; cursor: pointer; }
button.quiet { background: transparent; color: var(--muted); border-color: var(--line); }
button.choice { background: #fff; color: var(--blue); }
button.danger { background: #fff; color: var(--red); border-color: var(--red); }
button:disabled { opacity: .55; cursor: default; }
input, select, textarea { font: inherit; padding: .3em .5em; border: 1px solid #c4cad1; border-radius: 6px; max-width: 100%; }
textarea { width: 100%; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; }
label { display: inline-flex; gap: .4em; align-items: center; }
label.wide { display: flex; flex-direction: column; align-items: stretch; }
.gate { max-width: 28em; margin: 4em auto; padding: 1.5em; border: 1px solid var(--line); border-radius: 10px; }
.gate form { display: flex; flex-direction: column; gap: .8em; }
.consent fieldset { display: flex; flex-direction: column; gap: .35em; border: 1px solid var(--line); border-radius: 6px; }
.filters, .upload { display: flex; flex-wrap: wrap; gap: .8em; align-items: center; margin: .5em 0 1em; }
.upload .wide { flex-basis: 100%; }
table.list { width: 100%; border-collapse: collapse; }
table.list th { text-align: left; font-weight: 600; color: var(--muted); border-bottom: 1px solid var(--line); padding: .4em .5em; }
table.list td { border-bottom: 1px solid var(--line); padding: .45em .5em; vertical-align: top; overflow-wrap: anywhere; }
.pager { display: flex; gap: 1.5em; margin: 1em 0; }
.status { display: inline-block; padding: .05em .6em; border-radius: 1em; font-size: 13px; font-weight: 600; border: 1px solid currentColor; }
.status[data-status=running] { color: var(--blue); }
.status[data-status=suspended] { color: var(--amber); }
.status[data-status=completed] { color: var(--green); }
.status[data-status=failed] { color: var(--red); }
.status[data-status=cancelled] { color: var(--muted); }
h1 .status { font-size: 14px; vertical-align: middle; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; margin: .5em 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
time { border-bottom: 1px dotted #9aa1aa; cursor: help; }
.output { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .6em .75em; margin: .3em 0; max-height: 32em; overflow: auto; }
details.fold > summary { cursor: pointer; color: var(--muted); }
.asks { display: flex; flex-direction: column; gap: .8em; }
.ask { border: 1px solid #e6cf9c; background: #fffaf0; border-radius: 8px; padding: .8em 1em; }
.ask .question { font-size: 1.05em; margin: .2em 0 .6em; white-space: pre-wrap; overflow-wrap: anywhere; }
.ask form { display: flex; flex-wrap: wrap; gap: .5em; align-items: flex-start; }
.ask textarea { flex: 1 1 20em; min-height: 2.4em; }
.ask .meta { color: var(--muted); font-size: 13px; }
.ask form.form-ask { flex-direction: column; align-items: stretch; }
.ask .form-field { display: flex; flex-wrap: wrap; gap: .3em .6em; align-items: baseline; }
.ask .form-field > label { font-weight: 600; }
.ask .form-field .help { flex-basis: 100%; margin: 0; font-size: 13px; }
.ask .form-field .required { color: var(--amber); }
.ask fieldset.options { border: 0; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .2em 1em; }
.ask form.form-ask > button { align-self: flex-start; }
.steps, .calls { display: flex; flex-direction: column; gap: 1em; }
.step, .call { border: 1px solid var(--line); border-radius: 8px; padding: .6em .9em; }
.step > header, .call > header { display: flex; gap: .8em; flex-wrap: wrap; align-items: baseline; color: var(--muted); font-size: 13px; }
.step > header strong, .call > header strong { color: var(--fg); font-size: 15px; }
.message { border-left: 3px solid var(--line); padding: .2em 0 .2em .7em; margin: .6em 0; }
.message > .who { font-size: 12px; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.message[data-role=system] { border-color: var(--violet); }
.message[data-role=user] { border-color: var(--blue); }
.message[data-role=assistant] { border-color: var(--green); }
.message[data-role=tool] { border-color: var(--amber); }
.message.reply { background: #f3faf5; }
.message.reply .streaming { white-space: pre-wrap; overflow-wrap: anywhere; }
.untrusted { border: 2px dashed var(--red); border-radius: 6px; padding: .3em .6em; margin: .3em 0; }
.untrusted > .label { color: var(--red); font-size: 12px; font-weight: 700; }
.call[data-outcome=failed] { border-color: #f2c9c5; }
.call .failure { color: var(--red); }
ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 2px solid var(--line); }
ol.timeline li { padding: .25em 0 .25em .9em; position: relative; overflow-wrap: anywhere; }
ol.timeline li .type { font-weight: 600; }
ol.timeline li .seq { color: var(--muted); font-size: 12px; margin-right: .4em; }
ol.timeline li .where { color: var(--muted); font-size: 12px; margin-left: .4em; }
ol.timeline li .summary { color: var(--muted); margin-left: .6em; }
ol.timeline li details.fields { display: inline-block; margin-left: .6em; font-size: 12px; }
ol.timeline li details.fields[open] { display: block; margin-left: 0; }
ol.timeline li details.fields > summary { cursor: pointer; color: #9aa1aa; }
ol.timeline li[data-kind=ask] .type { color: var(--amber); }
ol.timeline li[data-kind=end] .type { color: var(--green); }
ol.timeline li[data-kind=fail] .type { color: var(--red); }
ul.files { padding-left: 1.2em; }
ol.source { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .5em .5em .5em 3.5em; white-space: pre-wrap; overflow-wrap: anywhere; }
ol.source li { padding-left: .5em; min-height: 1.45em; }
ol.source li::marker { color: #9aa1aa; }
ol.source li.bad { background: #fdf0ef; outline: 1px solid #f2c9c5; }
ol.source li .why { display: block; color: var(--red); font-family: system-ui, sans-serif; }
ol.problems { color: var(--red); }
@media (max-width: 700px) {
  main { padding: .6em .8em 2em; }
  table.list thead { display: none; }
  table.list, table.list tbody, table.list tr, table.list td { display: block; width: 100%; }
  table.list tr { border: 1px solid var(--line); border-radius: 8px; margin: .6em 0; padding: .3em .2em; }
  table.list td { border: 0; padding: .15em .6em; }
  table.list td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: .4em; }
  .ask form { flex-direction: column; align-items: stretch; }
}
`;
