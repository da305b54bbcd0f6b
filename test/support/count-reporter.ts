import type { Reporter, TestModule } from 'vitest/node';

export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * Counts a run the way its exit code judges it: a test that failed is one failure, and so is a file that
 * failed to load or a suite whose beforeAll/afterAll threw (vitest reports their tests as skipped, or
 * collects none), and so is an error thrown outside any test. Without that, a run whose only problem
 * was a file that could not load printed `0 failed` while vitest exited 1.
 */
export function countRun(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<unknown> = []): Counts {
  const counts: Counts = { passed: 0, failed: unhandled.length, skipped: 0 };
  for (const m of modules) {
    for (const t of m.children.allTests()) {
      const state = t.result().state;
      if (state === 'passed') counts.passed++;
      else if (state === 'failed') counts.failed++;
      else counts.skipped++;
    }
    for (const s of [m, ...m.children.allSuites()]) if (s.errors().length > 0) counts.failed++;
  }
  return counts;
}

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, that any CI can read
 * without knowing vitest's own output.
 */
export default class CountReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const { passed, failed, skipped } = countRun(modules, unhandledErrors);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
