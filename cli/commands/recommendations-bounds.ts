/**
 * Why a node's upper bound reads "unbounded" beside a finite DaemonSet-wide one (issue 31, item 6): both
 * are upstream's math. The upper bound is the 95th percentile times (1 + 1/confidence), and the confidence
 * is the history behind the row (the lesser of its days and its samples over a day's minutes): a node's row rests on its own pod's samples alone, the
 * DaemonSet-wide row pools every node's, so early on the first is capped at upstream's "no bound" and
 * the second is merely large. The table says so instead of leaving the two to contradict each other.
 */

import { isUnbounded } from '../../shared/kernel/units-format.js';
import type { ContainerRec } from '../../shared/nodescope/model.js';
import type { DaemonSetRecommendations } from '../../shared/nodescope/query.js';

const unboundedUpper = (r: ContainerRec | undefined): boolean =>
  r !== undefined && [r.upperBound.cpu, r.upperBound.memory].some((v) => v !== undefined && isUnbounded(v));

/** The note under `recommendations get`'s table, or none when the rows do not disagree. */
export function boundsNote(recs: Pick<DaemonSetRecommendations, 'dsWide' | 'nodes'>): string | undefined {
  const containers = Object.keys(recs.dsWide).filter((c) => !unboundedUpper(recs.dsWide[c]));
  const nodes = Object.entries(recs.nodes).filter(([, rec]) =>
    containers.some((c) => unboundedUpper(rec?.containers[c])),
  );
  if (!nodes.length) return undefined;
  return (
    `note: ${nodes.length} node row(s) read UPPER unbounded where the DaemonSet-wide row is finite: upstream's ` +
    "upper bound widens with too little history, and a node's row rests on its own pod's samples while the " +
    "DaemonSet-wide row pools every node's; it narrows as history builds up (x(1 + 1/days) over the 95th percentile)"
  );
}
