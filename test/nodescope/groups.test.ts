/**
 * Scope values and the cap on groups: a label with more values among the DaemonSet's nodes than a head
 * can hold is not grouped, and says why.
 */
import { describe, expect, it } from 'vitest';
import type { NodeFacts } from '../../shared/cycle/views.js';
import type { Bytes, EpochMillis, Millicores } from '../../shared/kernel/units.js';
import { ABSENT, MAX_GROUPS, scopeValueOf, scopeValues } from '../../shared/nodescope/groups.js';
import { type DsModel, newNodeRecord } from '../../shared/nodescope/model.js';
import { DsRecommendations } from '../../shared/nodescope/recommend.js';
import { type NodeScopeTarget, scopeOf } from '../../shared/nodescope/targets.js';
import { addCpuSample, addMemorySample, createState } from '../../shared/recommendation/index.js';

describe('groups', () => {
  it('scope values: the value, "" for an empty one, __absent__ without the label', () => {
    expect(scopeValueOf({ pool: 'gpu' }, 'pool')).toBe('gpu');
    expect(scopeValueOf({ pool: '' }, 'pool')).toBe('');
    expect(scopeValueOf({ other: 'x' }, 'pool')).toBe(ABSENT);
    expect(scopeValueOf({ toString: 'x' } as Record<string, string>, 'valueOf')).toBe(ABSENT);
  });

  it(`does not group more than ${MAX_GROUPS} values, and says why`, () => {
    const target = {
      containers: [{ name: 'a', requests: {}, limits: {} }],
      policies: {},
      scope: scopeOf('example.com/serial', undefined),
    } as unknown as NodeScopeTarget;
    const model: DsModel = { containers: ['a'], nodes: new Map() };
    const facts: NodeFacts[] = [];
    const t0 = Date.UTC(2026, 0, 1);
    for (let i = 0; i <= MAX_GROUPS; i++) {
      const name = `n${i}`;
      const rec = newNodeRecord(name, 1);
      if (i < 3) {
        const s = createState(t0 as EpochMillis);
        addCpuSample(s, (t0 + 60_000) as EpochMillis, (100 * (i + 1)) as Millicores);
        addMemorySample(s, (t0 + 60_000) as EpochMillis, (2 ** 27) as Bytes);
        rec.states[0] = s;
      }
      model.nodes.set(name, rec);
      facts.push({ name, labels: { 'example.com/serial': String(i) } } as unknown as NodeFacts);
    }
    const eligible = new Set(facts.map((f) => f.name));
    const values = scopeValues(facts, eligible, 'example.com/serial');
    const entry = { at: t0, gen: 0, containers: ['a'], samples: [], ooms: [] };
    const r = DsRecommendations.folded(target, model, entry, eligible, values);
    expect(r.ungrouped).toMatch(/example.com\/serial has 501 values .* more than 500 groups/);
    expect(r.groups.size).toBe(0);
    expect(r.recs.get('n0')).toEqual({ source: 'fallback', containers: r.dsWide });
    // One value fewer: grouped.
    values.delete('n500');
    eligible.delete('n500');
    const ok = DsRecommendations.folded(target, model, entry, eligible, values);
    expect(ok.ungrouped).toBeUndefined();
    expect(ok.recs.get('n0')).toMatchObject({ source: 'group', group: '0' });
  });
});
