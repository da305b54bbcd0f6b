/**
 * No object touched that fleetscope did not create (issue 34, defect 1): every delete, patch or update
 * of a user's object (../touches.ts: no managed-by fleetscope label, no feature's ownership label)
 * that reached a simulated apiserver is a violation, except the marks fleetscope documents on users'
 * objects: its own labels and annotations (fleetscope.io/...), and the resources of a pod through the
 * resize subresource (node scope's job). A write that changed nothing (a refused one) is no touch.
 */

import type { Touch } from '../records.js';
import type { Invariant, Outcome } from '../types.js';

/** fleetscope's marks on users' objects: a label or annotation of its own, a pod resized. */
export function allowedChange(t: Pick<Touch, 'object' | 'subresource'>, change: string): boolean {
  if (/^(label|annotation) [^ ]*fleetscope\.io[^ ]* (added|changed|removed)$/.test(change)) return true;
  return t.subresource === 'resize' && t.object.startsWith('pods/') && change === 'spec.containers changed';
}

export function judgeTouches(touches: Touch[]): Outcome {
  const violations: string[] = [];
  let marks = 0;
  for (const t of touches) {
    const bad = t.changes.filter((c) => !allowedChange(t, c));
    if (bad.length === 0) {
      if (t.changes.length) marks++;
      continue;
    }
    violations.push(
      `${t.cluster} ${t.method} ${t.object}${t.subresource ? `/${t.subresource}` : ''} (HTTP ${t.status}): ${bad.join(', ')}`,
    );
  }
  return {
    checked: touches.length,
    unit: `writes to users' objects (${marks} of fleetscope's own marks)`,
    violations,
  };
}

export const noForeignTouch: Invariant = {
  name: 'no object touched that the feature did not create',
  check: async (state) => judgeTouches(state.touches),
};
