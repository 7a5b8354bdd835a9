/**
 * A reporter of the workerd test run (vitest.workers.config.ts) that ends the process when
 * every test file has finished but the pool never finishes the run. @cloudflare/vitest-pool-workers
 * 0.15 (the last that runs on Node 20) can hang there after a run whose Durable Objects
 * still had alarms set (later versions fixed such teardown hangs), and a hang would hold
 * CI until its time limit. The exit code is the files' own result, and the reason is said.
 */
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';

/** How long the run may take to finish once its last file has. */
const GRACE_MS = 60_000;

export default class TeardownGuard implements Reporter {
  private expected = 0;
  private readonly ended: TestModule[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.expected = specifications.length;
  }

  onTestModuleEnd(module: TestModule): void {
    this.ended.push(module);
    if (this.ended.length < this.expected || this.timer !== null) return;
    // Unref'd: a run that finishes normally is not held up by it.
    this.timer = setTimeout(() => this.forceExit(), GRACE_MS);
    this.timer.unref();
  }

  onTestRunEnd(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private forceExit(): void {
    const failed = this.ended.filter((module) => !module.ok());
    const verdict = failed.length === 0 ? `all ${this.ended.length} passed` : `${failed.length} failed: ${failed.map((module) => module.moduleId).join(', ')}`;
    console.error(
      `\nteardown-guard: every test file finished (${verdict}), but the workers pool did not end the run within ${GRACE_MS / 1000} s; exiting with the files' result.`,
    );
    process.exit(failed.length === 0 ? 0 : 1);
  }
}
