/**
 * The run store: a run's files. In memory for the command line and tests; KV-backed in the Worker.
 */

/** A run's files. Paths are already validated by the Engine. */
export interface RunStore {
  read(path: string): Promise<string | null>;
  write(path: string, text: string): Promise<void>;
  append(path: string, text: string): Promise<void>;
  /** Paths under prefix, sorted. */
  list(prefix: string): Promise<string[]>;
  /** True when the file existed. */
  delete(path: string): Promise<boolean>;
}

/** A run store held in memory. */
export class MemoryRunStore implements RunStore {
  readonly files = new Map<string, string>();

  async read(path: string): Promise<string | null> {
    return this.files.get(path) ?? null;
  }
  async write(path: string, text: string): Promise<void> {
    this.files.set(path, text);
  }
  async append(path: string, text: string): Promise<void> {
    this.files.set(path, (this.files.get(path) ?? '') + text);
  }
  async list(prefix: string): Promise<string[]> {
    return [...this.files.keys()].filter((path) => path.startsWith(prefix)).sort();
  }
  async delete(path: string): Promise<boolean> {
    return this.files.delete(path);
  }
}
