/**
 * The KEP-5836 opt-out's pure rules (shared/balloons/opt-out.ts): the JSON patch that adds or removes
 * fleetscope's key, always fenced on the resourceVersion and never rewriting another owner's entry; a
 * full list refused naming the node; the field told from an OpenAPI v3 document, inline or by $ref.
 */
import { describe, expect, it } from 'vitest';
import { statusTable } from '../../cli/commands/balloons.js';
import { amounts } from '../../shared/balloons/amounts.js';
import { OPT_OUT_KEY, optOutChange, servesOptOutField } from '../../shared/balloons/opt-out.js';
import type { ClusterBalloons, NodeState } from '../../shared/balloons/store.js';

const node = (keys: string[]) => ({ name: 'n1', resourceVersion: '42', keys });
const fence = { op: 'test', path: '/metadata/resourceVersion', value: '42' };

describe('optOutChange', () => {
  it('adds the key: the whole policy where there is none, appended where others are', () => {
    expect(optOutChange(node([]), true)).toEqual({
      kind: 'patch',
      ops: [
        fence,
        { op: 'add', path: '/spec/podPreemptionPolicy', value: { disableResizePreemption: [OPT_OUT_KEY] } },
      ],
    });
    expect(optOutChange(node(['a.io/x']), true)).toEqual({
      kind: 'patch',
      ops: [
        fence,
        { op: 'add', path: '/spec/podPreemptionPolicy/disableResizePreemption/-', value: OPT_OUT_KEY },
      ],
    });
  });

  it('removes only its own entry, by its index', () => {
    expect(optOutChange(node(['a.io/x', OPT_OUT_KEY, 'b.io/y']), false)).toEqual({
      kind: 'patch',
      ops: [fence, { op: 'remove', path: '/spec/podPreemptionPolicy/disableResizePreemption/1' }],
    });
  });

  it('does nothing where the list already says what management says', () => {
    expect(optOutChange(node([OPT_OUT_KEY]), true)).toEqual({ kind: 'none' });
    expect(optOutChange(node(['a.io/x']), false)).toEqual({ kind: 'none' });
  });

  it('refuses to add to a list of 20, naming the node, and never evicts a key', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => `e.io/k${i}`);
    const c = optOutChange(node(twenty), true);
    expect(c).toMatchObject({
      kind: 'full',
      problem: expect.stringMatching(/^node n1: .*already holds 20 keys/),
    });
    // its own key in a full list is still removed when the node leaves management
    expect(optOutChange(node([...twenty.slice(1), OPT_OUT_KEY]), false).kind).toBe('patch');
  });
});

describe('servesOptOutField', () => {
  const doc = (nodeSpec: unknown, extra: Record<string, unknown> = {}) => ({
    components: { schemas: { 'io.k8s.api.core.v1.NodeSpec': nodeSpec, ...extra } },
  });

  it('finds the field inline or through a $ref, and not on a server without it', () => {
    const inline = { properties: { podPreemptionPolicy: { properties: { disableResizePreemption: {} } } } };
    expect(servesOptOutField(doc(inline))).toBe(true);
    const byRef = {
      properties: {
        podPreemptionPolicy: {
          allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.NodePodPreemptionPolicy' }],
        },
      },
    };
    const target = {
      'io.k8s.api.core.v1.NodePodPreemptionPolicy': { properties: { disableResizePreemption: {} } },
    };
    expect(servesOptOutField(doc(byRef, target))).toBe(true);
    expect(servesOptOutField(doc(byRef))).toBe(false);
    expect(servesOptOutField(doc({ properties: { taints: {} } }))).toBe(false);
    expect(servesOptOutField({})).toBe(false);
    expect(servesOptOutField(undefined)).toBe(false);
  });
});

describe('balloons status -o wide', () => {
  it('shows each node’s KEP-5836 state: opted out, and the resizes the kubelet holds without preemption', () => {
    const a = amounts(4000, 8 * 2 ** 30);
    const node = (resizePreemption?: NodeState['resizePreemption']): NodeState => ({
      allocatable: a,
      capacity: a,
      workloads: amounts(1000, 2 ** 30),
      balloon: amounts(1000, 2 ** 30),
      target: amounts(1000, 2 ** 30),
      ...(resizePreemption ? { resizePreemption } : {}),
    });
    const state: ClusterBalloons = {
      cluster: 'c1',
      at: 0,
      cycleId: 'x',
      errors: [],
      version: 1,
      nodes: {
        held: node({ optedOut: true, held: ['default/web-0'] }),
        full: node({ optedOut: false, problem: 'node full: ...' }),
        old: node(),
      },
    };
    const [head, ...rows] = statusTable([state], true);
    expect(head).toContain('RESIZE PREEMPTION');
    const cell = (n: string) => rows.find((r) => r.includes(` ${n} `))!.trimEnd();
    expect(cell('held')).toMatch(
      /opted out; kubelet holds 1 resize\(s\) without preemption \(default\/web-0\)$/,
    );
    expect(cell('full')).toMatch(/not opted out: the list is full$/);
    expect(cell('old')).toMatch(/ -$/);
  });
});
