/**
 * The groups per scope and shape. AEP-10031 as it stands (kubernetes/autoscaler#10032, #10012):
 * `status.recommendationGroups`, every group targets only, and `status.recommendation` the
 * DaemonSet-wide fallback with its bounds. The Deckhouse fork's older `status.groups`: label scopes
 * carry each group's bounds; kubernetes.io/hostname one group per node with targets only (a hostname
 * value seen twice once); `node` none in either.
 */
import { describe, expect, it } from 'vitest';
import type { ContainerRec, NodeRec } from '../../shared/nodescope/model.js';
import type { DsRecommendations } from '../../shared/nodescope/recommend.js';
import { statusGroups, statusRecommendation } from '../../shared/nodescope/status-groups.js';
import { type NodeScopeTarget, scopeOf } from '../../shared/nodescope/targets.js';

const rec = (cpu: number): ContainerRec => ({
  target: { cpu, memory: 2 ** 27 },
  lowerBound: { cpu: cpu / 2, memory: 2 ** 26 },
  upperBound: { cpu: cpu * 2, memory: 2 ** 28 },
  uncappedTarget: { cpu, memory: 2 ** 27 },
});
const nodeRec = (cpu: number): NodeRec => ({ source: 'node', containers: { b: rec(cpu), a: rec(cpu + 1) } });
const recs = {
  groups: new Map([
    ['gpu', { a: rec(500) }],
    ['__absent__', { a: rec(100) }],
    ['', { a: rec(50) }],
  ]),
  recs: new Map([
    ['n1', nodeRec(10)],
    ['n2', nodeRec(20)],
    ['n3', nodeRec(30)],
  ]),
} as unknown as DsRecommendations;
const target = (key: string) => ({ scope: scopeOf(key, undefined) }) as NodeScopeTarget;

describe('status.recommendationGroups (upstream, the default)', () => {
  it('label scope: one entry per scope value (present, empty, absent), sorted, targets only', () => {
    const groups = statusGroups(target('example.com/pool'), recs, new Map(), 'upstream');
    expect(groups).toEqual([
      {
        scopeValue: '',
        containerRecommendations: [{ containerName: 'a', target: { cpu: '50m', memory: '128Mi' } }],
      },
      {
        scopeValue: '__absent__',
        containerRecommendations: [{ containerName: 'a', target: { cpu: '100m', memory: '128Mi' } }],
      },
      {
        scopeValue: 'gpu',
        containerRecommendations: [{ containerName: 'a', target: { cpu: '500m', memory: '128Mi' } }],
      },
    ]);
  });

  it('status.recommendation: the DaemonSet-wide fallback, with its bounds, containers by name', () => {
    expect(statusRecommendation({ b: rec(20), a: rec(10) })).toEqual({
      containerRecommendations: [
        {
          containerName: 'a',
          target: { cpu: '10m', memory: '128Mi' },
          lowerBound: { cpu: '5m', memory: '64Mi' },
          upperBound: { cpu: '20m', memory: '256Mi' },
          uncappedTarget: { cpu: '10m', memory: '128Mi' },
        },
        expect.objectContaining({ containerName: 'b' }),
      ],
    });
  });

  it('scope node (KEP-4943) names no label: no groups', () => {
    expect(statusGroups(target('node'), recs, new Map(), 'upstream')).toBeUndefined();
  });
});

describe('status.groups (the Deckhouse fork)', () => {
  it('label scope: one entry per scope value, sorted, with bounds', () => {
    const groups = statusGroups(target('example.com/pool'), recs, new Map(), 'deckhouse');
    expect(groups?.map((g) => g.scopeValue)).toEqual(['', '__absent__', 'gpu']);
    expect(groups?.[2]?.containerRecommendations).toEqual([
      {
        containerName: 'a',
        target: { cpu: '500m', memory: '128Mi' },
        lowerBound: { cpu: '250m', memory: '64Mi' },
        upperBound: { cpu: '1', memory: '256Mi' },
        uncappedTarget: { cpu: '500m', memory: '128Mi' },
      },
    ]);
  });

  it('kubernetes.io/hostname: per node, targets only, a hostname value once', () => {
    const hostnames = new Map([
      ['n1', 'host-a'],
      ['n2', 'host-a'],
      ['n3', 'host-c'],
    ]);
    const groups = statusGroups(target('kubernetes.io/hostname'), recs, hostnames, 'deckhouse');
    expect(groups).toEqual([
      {
        scopeValue: 'host-a',
        containerRecommendations: [
          { containerName: 'a', target: { cpu: '11m', memory: '128Mi' } },
          { containerName: 'b', target: { cpu: '10m', memory: '128Mi' } },
        ],
      },
      {
        scopeValue: 'host-c',
        containerRecommendations: [
          { containerName: 'a', target: { cpu: '31m', memory: '128Mi' } },
          { containerName: 'b', target: { cpu: '30m', memory: '128Mi' } },
        ],
      },
    ]);
  });

  it('scope node (KEP-4943) names no label: no groups', () => {
    expect(statusGroups(target('node'), recs, new Map(), 'deckhouse')).toBeUndefined();
  });
});
