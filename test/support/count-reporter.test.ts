/**
 * The closing line CI reads (`tests: N passed, N failed, N skipped`) agrees with vitest's exit code: a
 * file that fails to load and a suite whose beforeAll throws are failures, not `0 failed` beside exit 1.
 * Each case runs the real vitest, with only this reporter, on a few throwaway test files.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/root.js';
import { testDir } from './temp.js';

const FILES: Record<string, string> = {
  'pass.test.ts': "test('passes', () => {});\ntest.skip('is skipped', () => {});\n",
  'broken.test.ts': "throw new Error('cannot load');\ntest('never collected', () => {});\n",
  'hook.test.ts':
    "beforeAll(() => { throw new Error('server did not start'); });\ntest('a', () => {});\ntest('b', () => {});\n",
};

/** vitest run in a directory of FILES (globals on, so they import nothing), filtered to `only`. */
function runVitest(only: string[]): Promise<{ code: number; out: string }> {
  const dir = testDir('count-reporter-');
  for (const [name, body] of Object.entries(FILES)) writeFileSync(join(dir, name), body);
  const reporter = join(REPO_ROOT, 'test/support/count-reporter.ts');
  writeFileSync(
    join(dir, 'vitest.config.mjs'),
    `export default { test: { globals: true, include: ['*.test.ts'], reporters: [${JSON.stringify(reporter)}] } };\n`,
  );
  const vitest = join(REPO_ROOT, 'node_modules/vitest/vitest.mjs');
  const args = [vitest, 'run', '--root', dir, '--config', join(dir, 'vitest.config.mjs'), ...only];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: dir, timeout: 50_000 }, (err, stdout) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout }),
    );
  });
}

const closingLine = (out: string) => out.trim().split('\n').at(-1);

describe('the closing summary line', () => {
  it('counts a file that failed to load and a suite whose beforeAll threw as failures', async () => {
    const run = await runVitest([]);
    expect(run.code).toBe(1);
    // broken.test.ts: 1 (no test collected); hook.test.ts: 1 for the suite, its two tests skipped.
    expect(closingLine(run.out)).toBe('tests: 1 passed, 2 failed, 3 skipped');
  });

  it('a clean run says 0 failed, and vitest exits 0', async () => {
    const run = await runVitest(['pass.test.ts']);
    expect(run.code).toBe(0);
    expect(closingLine(run.out)).toBe('tests: 1 passed, 0 failed, 1 skipped');
  });
});
