/**
 * The README's exit-code table is the CLI's own list (cli/exit-codes.ts), word for word, and the CLI
 * exits only with the codes that list names (test/cli/exit-codes.sim.test.ts runs each command's error
 * paths against it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_CODES, exitCodesMarkdown } from '../../cli/exit-codes.js';
import { REPO_ROOT } from '../../local/runtime.js';

describe("the README's exit codes", () => {
  it('are the table generated from cli/exit-codes.ts', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const section = /<!-- exit-codes:begin[^>]*-->\n([\s\S]*?)\n<!-- exit-codes:end -->/.exec(readme);
    expect(section, 'README.md has no exit-codes markers').not.toBeNull();
    // On a difference, paste the expected text between the markers.
    expect(section![1]).toBe(exitCodesMarkdown().join('\n'));
  });

  it('name each code once, in order, the ones main() returns', () => {
    expect(EXIT_CODES.map((e) => e.code)).toEqual([0, 1, 2]);
    expect(Object.values(EXIT)).toEqual([0, 1, 2]);
  });
});
