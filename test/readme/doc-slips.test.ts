/**
 * What the README and the docs tell a reader to type works as written (issue 31.7): npm flags after
 * `--`, the walkthrough on the fast path, the EBADENGINE lines as they come, and a permissions row for
 * every capability.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';
import { CAPABILITIES } from '../../shared/capabilities.js';

const read = (rel: string) => readFileSync(join(REPO_ROOT, rel), 'utf8');
const docs = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);

describe('the docs, as a reader types them', () => {
  it('pass npm start its flags after --, where npm does not eat them', () => {
    for (const f of docs)
      for (const m of read(f).matchAll(/npm (?:start|run [\w:-]+) (--?[a-z][\w-]*)/g))
        expect(`${f}: ${m[0]}`).toMatch(/ --$/);
  });

  it('walk through on the fast path: fleetscope after npm link, not npx', () => {
    const readme = read('README.md');
    const walk = readme.slice(
      readme.indexOf('<!-- walkthrough:begin -->'),
      readme.indexOf('<!-- walkthrough:end -->'),
    );
    const lines = [...walk.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((b) => b[1]!.trim().split('\n'));
    expect(lines.length).toBeGreaterThan(15);
    for (const l of lines) expect(l).toMatch(/^(fleetscope |export )/);
  });

  it('do not promise EBADENGINE only once', () => {
    const readme = read('README.md');
    const said = readme.slice(readme.indexOf('EBADENGINE') - 200, readme.indexOf('EBADENGINE') + 300);
    expect(said).not.toMatch(/warnings, once/);
    expect(said).toMatch(/for\s+each package/);
  });

  it('list in-cluster permissions for every capability', () => {
    const table = read('docs/deploying.md').split('## Permissions in each cluster')[1]!;
    const rows = [...table.matchAll(/^\| `([\w-]+)` \|/gm)].map((m) => m[1]);
    expect(rows).toEqual(CAPABILITIES.map((c) => c.id));
  });
});
