/**
 * A reporter of the workerd test run (vitest.workers.config.ts) that turns a run which stops
 * making progress into a failure that says where, rather than a process that waits forever.
 *
 * Each test has its timeout (testTimeout), but some waits have none: a test file's imports
 * and its hooks' teardown, and the pool's own end of the run. @cloudflare/vitest-pool-workers
 * 0.15 (the last that runs on Node 20) can stop there: after a run whose Durable Objects still
 * had alarms set its pool may never end (later versions fixed such teardown hangs), and a
 * workerd that stops answering leaves a file in flight with no timer to end it. So when
 * nothing has been reported for STALL_MS, the guard prints what was in flight and exits:
 * with the files' own result when every file had finished (a teardown hang), else 1.
 */
import type { Reporter, TestCase, TestModule, TestSpecification } from 'vitest/node';

/** How long the run may go without a test starting or ending; far above the slowest test's own timeout (TEARDOWN_GUARD_STALL_MS to try the guard). */
const STALL_MS = Number(process.env.TEARDOWN_GUARD_STALL_MS) || 3 * 60_000;
/** How long the run may take to end once its last file has: a pool that ends does so in seconds. */
const TEARDOWN_MS = 20_000;

export default class TeardownGuard implements Reporter {
  private expected = 0;
  private readonly ended: TestModule[] = [];
  private readonly inFlight = new Set<string>();
  private readonly testsInFlight = new Map<string, string>();
  private lastProgress = Date.now();
  private lastWhat = 'the run started';
  private timer: ReturnType<typeof setInterval> | null = null;

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.expected = specifications.length;
    this.progress('the run started');
    // Unref'd: a run that ends normally is not held up by it.
    this.timer = setInterval(() => this.check(), 5_000);
    this.timer.unref();
  }

  onTestModuleQueued(module: TestModule): void {
    this.inFlight.add(module.moduleId);
    this.progress(`${module.moduleId} queued`);
  }

  onTestModuleStart(module: TestModule): void {
    this.progress(`${module.moduleId} started`);
  }

  onTestCaseReady(test: TestCase): void {
    this.testsInFlight.set(test.id, `${test.module.moduleId} > ${test.fullName}`);
    this.progress(`${test.fullName} started`);
  }

  onTestCaseResult(test: TestCase): void {
    this.testsInFlight.delete(test.id);
    this.progress(`${test.fullName} ended`);
  }

  onTestModuleEnd(module: TestModule): void {
    this.inFlight.delete(module.moduleId);
    this.ended.push(module);
    this.progress(`${module.moduleId} ended`);
  }

  onTestRunEnd(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private progress(what: string): void {
    this.lastProgress = Date.now();
    this.lastWhat = what;
  }

  private check(): void {
    const allEnded = this.ended.length >= this.expected;
    const quiet = Date.now() - this.lastProgress;
    if (quiet < (allEnded ? TEARDOWN_MS : STALL_MS)) return;
    const failed = this.ended.filter((module) => !module.ok());
    const verdict = failed.length === 0 ? `all ${this.ended.length} passed` : `${failed.length} failed: ${failed.map((module) => module.moduleId).join(', ')}`;
    if (allEnded) {
      console.error(
        `\nteardown-guard: every test file finished (${verdict}), but the workers pool did not end the run within ${TEARDOWN_MS / 1000} s; exiting with the files' result.`,
      );
      process.exit(failed.length === 0 ? 0 : 1);
    }
    const files = [...this.inFlight].join(', ') || 'none';
    const tests = [...this.testsInFlight.values()].join('\n  ') || 'none';
    console.error(
      `\nteardown-guard: nothing reported for ${Math.round(quiet / 1000)} s (the last: ${this.lastWhat}); ${this.ended.length} of ${this.expected} files finished (${verdict}).` +
        `\nFiles started and not finished: ${files}\nTests in flight:\n  ${tests}\nThe run stopped making progress: failing it rather than waiting.`,
    );
    process.exit(1);
  }
}
