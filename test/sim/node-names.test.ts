/**
 * A simulated node's name gives back the index it was made from (nodeIndexOfName), whatever the
 * cluster's VPC block: the bench computes each node's load from it as the simulator does.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterState } from '../../local/sim/cluster.js';
import { nodeIndexOfName, nodeShape } from '../../local/sim/nodes.js';

describe('nodeIndexOfName', () => {
  it("inverts nodeShape's names across VPC blocks and the 62,500-node steps", () => {
    for (const seedHash of [0, 7, 63, 0x9e3779b9]) {
      const cluster = { seedHash } as ClusterState;
      for (const i of [0, 1, 249, 250, 4_999, 62_499, 62_500, 130_001, 249_999])
        expect(nodeIndexOfName(nodeShape(cluster, i).name)).toBe(i);
    }
  });

  it('answers undefined for a name the simulator did not make', () => {
    for (const name of ['n1', 'ip-10-0-1-10', 'ip-10-0-x-10.ec2.internal', 'gke-pool-1-abcd'])
      expect(nodeIndexOfName(name)).toBeUndefined();
  });
});
