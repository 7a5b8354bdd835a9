/**
 * The rules of the `uses:` key beyond its shape (Tools chapter, "Declaring Packs under
 * uses:" and "Errors in the uses: key"): each string entry obeys the name grammar, and no
 * Pack id is declared twice, whatever the vendors.
 */
import { parseUsesEntry } from './name-grammar.ts';

/** A checked entry, before its position is attached. */
export interface CheckedEntry {
  index: number;
  text: string;
  vendor: string;
  packId: string;
  fqName: string;
}

/** A `uses:` problem; `index` is the entry it is about, absent for a repeated Pack id. */
export interface UsesIssue {
  message: string;
  index?: number;
}

/**
 * Checks the string entries of a `uses:` list (other values are the schema's to report)
 * and returns the valid entries in written order, with every problem found.
 */
export function checkUsesEntries(list: readonly unknown[]): { entries: CheckedEntry[]; issues: UsesIssue[] } {
  const entries: CheckedEntry[] = [];
  const issues: UsesIssue[] = [];
  list.forEach((text, index) => {
    if (typeof text !== 'string') return;
    const parsed = parseUsesEntry(text);
    if (parsed.ok) entries.push({ index, text, vendor: parsed.vendor, packId: parsed.packId, fqName: parsed.fqName });
    else issues.push({ message: `invalid uses entry \`${text}\`: ${parsed.reason}`, index });
  });
  const repeated = firstRepeatedPackId(entries);
  if (repeated !== undefined) {
    // The chapter says this message reports no line or column.
    issues.push({ message: `Pack id ${repeated} is declared more than once under uses` });
  }
  return { entries, issues };
}

/** The Pack id whose second appearance comes first in the list, if any repeats. */
function firstRepeatedPackId(entries: readonly CheckedEntry[]): string | undefined {
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.packId)) return entry.packId;
    seen.add(entry.packId);
  }
  return undefined;
}
