/**
 * What the README's walkthrough writes into the project's directory stays out of git: the simulator's
 * kubeconfig carries credentials, the report is generated, the walkthrough's state is local.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';

describe('.gitignore', () => {
  const full = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const readme = full.slice(
    full.indexOf('<!-- walkthrough:begin -->'),
    full.indexOf('<!-- walkthrough:end -->'),
  );
  const ignored = readFileSync(join(REPO_ROOT, '.gitignore'), 'utf8').split('\n');

  it('covers every file and state directory the walkthrough writes', () => {
    const written = [
      ...readme.matchAll(/--(?:kubeconfig-out|out) (\S+)/g),
      ...readme.matchAll(/FLEETSCOPE_STATE_DIR=(\S+)/g),
    ].map((m) => m[1]!);
    expect(written).toEqual(
      expect.arrayContaining(['sim.kubeconfig', 'report.html', '.fleetscope-walkthrough']),
    );
    for (const path of written)
      expect(ignored, path).toEqual(
        expect.arrayContaining([expect.stringMatching(new RegExp(`^/?${path.replace('.', '\\.')}/?$`))]),
      );
  });
});
