/**
 * A section entry's conversation as the driver holds it: the JSON text of each record the
 * Lua runtime sent, with a running digest, so a round sends only what changed and a replay
 * compares a digest instead of the whole conversation.
 */
import type { Json } from '../json/json.ts';
import { digestText } from '../json/digest.ts';

/** The records of one conversation and the digest of each prefix of them. */
export class Conversation {
  private readonly records: string[] = [];
  private readonly prefixDigests: string[] = [];
  /** Each record parsed, once, the first time a live round needs it. */
  private readonly parsed: (Json | undefined)[] = [];
  private characters = 0;
  private lastTools: { text: string; digest: string; parsed?: Json } = { text: 'null', digest: digestText('null') };

  /**
   * Replaces the records from position `from` (1-based) on with the `count` texts of `values`
   * that start at `start` (a round's yielded values hold them in place). `parsed`, when the
   * caller made the records itself, holds them as values, one for each text: what JSON.parse
   * would make of it.
   */
  update(from: number, values: readonly unknown[], start = 0, count = values.length - start, parsed?: readonly Json[]): void {
    for (let i = from - 1; i < this.records.length; i++) this.characters -= this.records[i]!.length;
    this.records.length = from - 1;
    this.prefixDigests.length = from - 1;
    this.parsed.length = Math.min(this.parsed.length, from - 1);
    for (let k = start; k < start + count; k++) {
      const text = String(values[k]);
      this.characters += text.length;
      const previous = this.prefixDigests[this.prefixDigests.length - 1] ?? '';
      this.records.push(text);
      this.prefixDigests.push(digestText(previous, text));
      if (parsed) this.parsed[this.records.length - 1] = parsed[k - start];
    }
  }

  /** The records from position `from` (1-based) on, parsed. */
  recordsFrom(from: number): Json[] {
    const records: Json[] = [];
    for (let i = Math.max(0, from - 1); i < this.records.length; i++) records.push((this.parsed[i] ??= JSON.parse(this.records[i]!) as Json)!);
    return records;
  }

  /** The digest of a round over these records with the given head and tools. */
  digest(head: string, tools: string): string {
    return digestText(head, '\n', this.tools(tools).digest, '\n', this.prefixDigests[this.prefixDigests.length - 1] ?? '');
  }

  /** A section's tool list is the same text every round: digested and parsed once. */
  private tools(text: string): { text: string; digest: string; parsed?: Json } {
    if (this.lastTools.text !== text) this.lastTools = { text, digest: digestText(text) };
    return this.lastTools;
  }

  /**
   * About how many tokens a round over these records takes: a character count over four,
   * plus a little per record. An estimate that needs no tokenizer and no I/O, so replays
   * reach the same verdict.
   */
  estimateTokens(tools: string, system: string): number {
    return Math.ceil((this.characters + tools.length + system.length) / 4) + 4 * (this.records.length + 1);
  }

  /**
   * The request a provider gets: the head's fields, the system prose first, the records, the
   * tools. Records are parsed once and shared by every later round's request, so a provider
   * must not change the request it is given.
   */
  request(head: string, tools: string, system: string): Json {
    const messages: Json[] = system === '' ? [] : [{ content: system, role: 'system' }];
    for (let i = 0; i < this.records.length; i++) {
      messages.push((this.parsed[i] ??= JSON.parse(this.records[i]!) as Json)!);
    }
    const list = this.tools(tools);
    list.parsed ??= JSON.parse(tools) as Json;
    // The head's own object, given two more keys (a spread of it costs four times as much).
    const request = JSON.parse(head) as { [key: string]: Json };
    request.messages = messages;
    request.tools = list.parsed;
    return request;
  }
}
