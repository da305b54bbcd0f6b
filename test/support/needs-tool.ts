/**
 * Suites that need a tool a developer's machine may lack (Chromium, kubectl, a real kube-apiserver).
 * Without it a developer's run skips the suite and prints one line saying what was skipped and how to
 * enable it; under CI=true the same absence is a failing test, because CI installs every tool and a
 * suite that silently skipped there would prove nothing.
 */
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';

export interface ToolNeed {
  /** What the suite needs, as a reader would name it: "Chromium", "kubectl", "a real kube-apiserver". */
  tool: string;
  /** Why it is missing, or undefined when it is there. */
  missing: string | undefined;
  /** How to make it available: an install command or an environment variable. */
  enable: string;
}

/** `describe(name, fn)` when the tool is there; otherwise a one-line skip, or a failure under CI=true. */
export function describeNeeding(need: ToolNeed, name: string, fn: () => void): void {
  if (need.missing === undefined) {
    describe(name, fn);
    return;
  }
  const why = need.missing;
  if (process.env.CI === 'true') {
    describe(name, () => {
      it(`needs ${need.tool}`, () => {
        throw new Error(`CI=true and ${why}: ${need.enable}`);
      });
    });
    return;
  }
  process.stdout.write(`${skipNotice(name, need)}\n`);
  describe.skip(name, () => {
    it(`needs ${need.tool}`, () => {});
  });
}

/** The one line a developer's run prints for a suite it skipped. */
export function skipNotice(name: string, need: ToolNeed): string {
  return `skipped: ${name} (needs ${need.tool}): ${need.missing}; to run it, ${need.enable}`;
}

/** The first of `paths` that exists, as a ToolNeed for `tool`. */
export function executableNeed(
  tool: string,
  paths: readonly string[],
  exists: (p: string) => boolean,
  enable: string,
): ToolNeed & { path: string | undefined } {
  const path = paths.find(exists);
  return {
    tool,
    path,
    enable,
    missing: path ? undefined : `${tool} is not installed at ${paths.join(' or ')}`,
  };
}

/** kubectl, where a machine's package puts it. */
export function kubectlNeed(): ToolNeed & { path: string | undefined } {
  return executableNeed(
    'kubectl',
    ['/usr/bin/kubectl', '/usr/local/bin/kubectl'],
    existsSync,
    'install kubectl at /usr/bin or /usr/local/bin (the CI machine image has it)',
  );
}
