/** Node autoscalers told from node labels, and the warning status prints for their pools. */
import { describe, expect, it } from 'vitest';
import { autoscalerOf, autoscalerWarnings } from '../../shared/balloons/autoscalers.js';

describe('node autoscalers', () => {
  it('names Karpenter from the labels it puts on its nodes, and nothing else from node-group labels', () => {
    expect(autoscalerOf({ 'karpenter.sh/nodepool': 'default' })).toBe(
      'Karpenter (karpenter.sh/nodepool=default)',
    );
    expect(autoscalerOf({ 'karpenter.sh/provisioner-name': 'p' })).toMatch(/^Karpenter \(v1alpha5/);
    // a managed node group says nothing of whether cluster-autoscaler runs (its tags are cloud-side)
    expect(autoscalerOf({ 'eks.amazonaws.com/nodegroup': 'ng-1' })).toBeUndefined();
  });

  it('warns once per pool and autoscaler, counting the nodes', () => {
    const w = autoscalerWarnings([
      { node: 'a', pool: 'batch', autoscaler: 'Karpenter (karpenter.sh/nodepool=x)' },
      { node: 'b', pool: 'batch', autoscaler: 'Karpenter (karpenter.sh/nodepool=x)' },
      { node: 'c', pool: 'web' },
    ]);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(/^warning: pool batch: 2 ballooned node\(s\) managed by Karpenter/);
  });
});
