/**
 * What a hollow kubelet leaves in /tmp: kubemark makes its root directory (`/tmp/hollow-kubelet.N`,
 * with the pods' logs and volumes) there whatever TMPDIR says, and never removes it; a run of the real
 * suites left about 70. The node's own log names it ("Using ... as root dir"), so only this node's is
 * removed, never one of a cluster another suite runs beside it. (Its fake runtime's
 * `/tmp/kubelet_remote_N.sock` is an empty socket file no log names; it stays.)
 */
import { readFileSync, rmSync } from 'node:fs';

const ROOT_LINE = /Using (\/tmp\/hollow-kubelet\.\d+) as root dir/g;

/** The root directories a hollow kubelet's log says it used; none where the log cannot be read. */
export function kubeletRoots(log: string): string[] {
  let text: string;
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  return [...new Set([...text.matchAll(ROOT_LINE)].map((m) => m[1] as string))];
}

/** Removes the root directories named in a stopped hollow kubelet's log. */
export function removeKubeletRoots(log: string): void {
  for (const dir of kubeletRoots(log)) rmSync(dir, { recursive: true, force: true });
}
