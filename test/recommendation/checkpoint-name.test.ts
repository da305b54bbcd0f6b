/**
 * Checkpoint names as upstream's DaemonSet-scope implementation writes them (kubernetes/autoscaler
 * #10012, pkg/utils/scope: CheckpointName and EncodeCheckpointScopeValue): `<vpa>-<container>` without
 * scope, else `<vpa>-<container>-%x` of FNV-1a 32 (hash/fnv New32a) over the persisted value, which is
 * `__empty__` for an empty value; Go's %x pads nothing.
 */
import { describe, expect, it } from 'vitest';
import { checkpointObject, fnv32a } from '../../shared/recommendation/checkpoint/vpa-checkpoint.js';

const STATUS = {
  lastUpdateTime: '2026-11-26T10:00:00Z',
  version: 'v3',
  cpuHistogram: { referenceTimestamp: '2026-11-26T00:00:00Z', bucketWeights: {}, totalWeight: 0 },
  memoryHistogram: { referenceTimestamp: '2026-11-26T00:00:00Z', bucketWeights: {}, totalWeight: 0 },
  firstSampleStart: '2026-11-26T06:00:00Z',
  lastSampleStart: '2026-11-26T09:59:00Z',
  totalSamplesCount: 1,
};

/** FNV-1a 32 written out again, in BigInt, from the algorithm's definition (offset basis, prime). */
function reference(s: string): number {
  let h = 2166136261n;
  for (const b of Buffer.from(s, 'utf8')) h = ((h ^ BigInt(b)) * 16777619n) % 2n ** 32n;
  return Number(h);
}

describe('scoped checkpoint names', () => {
  it('FNV-1a 32: the published vectors, and the reference on UTF-8 values', () => {
    expect(fnv32a('')).toBe(0x811c9dc5);
    expect(fnv32a('a')).toBe(0xe40c292c);
    expect(fnv32a('foobar')).toBe(0xbf9cf968);
    for (const v of ['__empty__', '__absent__', 'gpu', 'ip-10-0-1-17.eu-west-1.compute.internal', 'zürich'])
      expect(fnv32a(v)).toBe(reference(v));
  });

  it('names a value, an empty value (as __empty__) and no scope as upstream does', () => {
    const named = (v?: string) => checkpointObject('ns', 'agent', 'collector', STATUS, v);
    expect(named('gpu').metadata.name).toBe(`agent-collector-${reference('gpu').toString(16)}`);
    expect(named('').spec.scopeValue).toBe('__empty__');
    expect(named('').metadata.name).toBe(`agent-collector-${reference('__empty__').toString(16)}`);
    expect(named('__absent__').metadata.name).toBe(`agent-collector-${reference('__absent__').toString(16)}`);
    expect(named(undefined).metadata.name).toBe('agent-collector');
    expect(named(undefined).spec.scopeValue).toBeUndefined();
  });

  it('pads nothing, as Go %x: a hash below 0x10000000 gives fewer than 8 digits', () => {
    let value = '';
    for (let i = 0; i < 100_000 && !value; i++) if (reference(`node-${i}`) < 0x10000000) value = `node-${i}`;
    expect(value).not.toBe('');
    const suffix = checkpointObject('ns', 'agent', 'c', STATUS, value).metadata.name.slice('agent-c-'.length);
    expect(suffix.length).toBeLessThan(8);
    expect(Number.parseInt(suffix, 16)).toBe(reference(value));
  });
});
