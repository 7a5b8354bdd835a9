/**
 * The run's files as its store effects see them: the committed files of the run object's
 * storage, plus the changes of store effects whose journal entries are not yet committed.
 *
 * A change waits here until the journal entry of its effect commits, and then commits in
 * the same transaction (run-state.ts). So the files never hold a change the journal does
 * not record: after a crash, the replay performs the effect again on the files as they
 * were, and `store.append` never appends twice.
 */
import type { JournalEntry } from '../../engine/journal.ts';
import type { RunStore } from '../../host/run-store.ts';
import type { FileChange, RunState } from './run-state.ts';

/** A RunStore over a run object's storage. */
export class DurableRunStore implements RunStore {
  private pending: FileChange[] = [];

  constructor(private readonly state: RunState) {}

  async read(path: string): Promise<string | null> {
    return this.current(path) ?? null;
  }
  async write(path: string, text: string): Promise<void> {
    this.pending.push({ op: 'write', path, text });
  }
  async append(path: string, text: string): Promise<void> {
    this.pending.push({ op: 'append', path, text });
  }
  async list(prefix: string): Promise<string[]> {
    const paths = new Set(this.state.files(prefix));
    for (const change of this.pending) if (change.path.startsWith(prefix)) paths.add(change.path);
    return [...paths].filter((path) => this.current(path) !== undefined).sort();
  }
  async delete(path: string): Promise<boolean> {
    const existed = this.current(path) !== undefined;
    this.pending.push({ op: 'delete', path });
    return existed;
  }

  /** Takes the pending change that `entry` journals, if it is a store effect, to commit with it. */
  changesFor(entry: JournalEntry): FileChange[] {
    const request = entry.request;
    const op = request.op === 'store.write' ? 'write' : request.op === 'store.append' ? 'append' : request.op === 'store.delete' ? 'delete' : null;
    if (op === null || !('path' in request)) return [];
    const index = this.pending.findIndex(
      (change) => change.op === op && change.path === request.path && (change.op === 'delete' || !('text' in request) || change.text === request.text),
    );
    if (index < 0) return [];
    return this.pending.splice(index, 1);
  }

  /** A file's text with the pending changes applied in order; undefined when it does not exist. */
  private current(path: string): string | undefined {
    let text = this.state.file(path);
    for (const change of this.pending) {
      if (change.path !== path) continue;
      if (change.op === 'delete') text = undefined;
      else text = change.op === 'write' ? change.text : (text ?? '') + change.text;
    }
    return text;
  }
}
