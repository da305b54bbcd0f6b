/**
 * A fresh read of one node's pods for the check after an inflate (./recheck.ts): two field-selected
 * lists, the pods bound to the node and the pods nominated to it (status.nominatedNodeName, a pod that
 * preempted there and waits for its victims to go), never served from the cycle's snapshot.
 */
import { ClusterSnapshot } from '../cycle/snapshot.js';
import type { PodView } from '../cycle/views.js';
import type { RawReader } from '../k8s/raw-reader.js';
import type { FreshPods } from './cluster-read.js';
import { balloonPod } from './read.js';

const holding = (p: PodView) => p.phase !== 'Succeeded' && p.phase !== 'Failed';

export function freshPods(reader: RawReader): FreshPods {
  return {
    async podsOn(node) {
      const snapshot = new ClusterSnapshot(reader, { pageSize: 500 });
      const list = (fieldSelector: string) => snapshot.pods({ fieldSelector, keep: holding });
      const [bound, nominated] = await Promise.all([
        list(`spec.nodeName=${node}`),
        list(`status.nominatedNodeName=${node}`),
      ]);
      return [...bound, ...nominated.filter((p) => p.node === '')].map((p) => balloonPod(p));
    },
  };
}
