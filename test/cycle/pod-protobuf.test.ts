/**
 * What Go writes that JSON leaves out, read as JSON would have it: a zero metav1.Time is written as an
 * empty message (time_proto.go marshals nothing for a zero time) where JSON has null.
 */
import { describe, expect, it } from 'vitest';
import { podListFromProtobuf, podSchema } from '../../shared/cycle/pod-protobuf.js';
import { podView } from '../../shared/cycle/views.js';

/** A PodList message in its k8s\0 + runtime.Unknown envelope, as kube-apiserver frames it. */
function framed(list: Record<string, unknown>): Buffer {
  const raw = podSchema().lookupType('pod.PodList').encode(list).finish();
  const kind = Buffer.from('PodList');
  const typeMeta = Buffer.concat([
    Buffer.from([0x0a, 2]),
    Buffer.from('v1'),
    Buffer.from([0x12, kind.length]),
    kind,
  ]);
  const len = (n: number) => {
    const out: number[] = [];
    for (let v = n; ; v >>>= 7) {
      if (v < 0x80) return Buffer.from([...out, v]);
      out.push((v & 0x7f) | 0x80);
    }
  };
  const unknown = Buffer.concat([
    Buffer.from([0x0a]),
    len(typeMeta.length),
    typeMeta,
    Buffer.from([0x12]),
    len(raw.length),
    Buffer.from(raw),
  ]);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]);
}

describe('podListFromProtobuf', () => {
  it("reads Go's zero time (an empty Time) as no time, as JSON's null", () => {
    const finished = Date.parse('2026-11-20T10:05:07Z') / 1000;
    const body = framed({
      items: [
        {
          metadata: { name: 'p', namespace: 'ns', creationTimestamp: { seconds: finished } },
          spec: { nodeName: 'n', containers: [{ name: 'c' }] },
          status: {
            startTime: {},
            containerStatuses: [
              {
                name: 'c',
                lastState: {
                  terminated: { reason: 'OOMKilled', startedAt: {}, finishedAt: { seconds: finished } },
                },
              },
            ],
          },
        },
      ],
    });
    const pod = podListFromProtobuf(body).items?.[0];
    expect(pod?.status?.startTime).toBeUndefined();
    expect(pod?.status?.containerStatuses?.[0]?.lastState?.terminated).toEqual({
      reason: 'OOMKilled',
      startedAt: undefined,
      finishedAt: '2026-11-20T10:05:07Z',
    });
    // The view JSON gives: the kill's time, and no run length to call it a quick OOM by.
    const view = podView(pod ?? {});
    expect(view?.containers[0]?.oomAt).toBe(finished * 1000);
    expect(view?.containers[0]?.oomRanMs).toBeUndefined();
  });
});

describe('podListFromProtobuf, where a waiting pod may land', () => {
  it('reads required node affinity, schedulerName, schedulingGates and preemptionPolicy as JSON has them', () => {
    const spec = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a', 'b'] }] },
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
            ],
          },
        },
      },
      schedulerName: 'volcano',
      schedulingGates: [{ name: 'example.com/quota' }],
      preemptionPolicy: 'Never',
      containers: [{ name: 'c' }],
    };
    const json = { metadata: { name: 'p', namespace: 'ns' }, spec, status: { phase: 'Pending' } };
    const pod = podListFromProtobuf(framed({ items: [json] })).items?.[0];
    expect(podView(pod!)).toEqual(podView(json));
    expect(podView(pod!)?.waiting).toEqual({
      schedulerName: 'volcano',
      gated: true,
      terms: [
        { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a', 'b'] }], matchFields: [] },
        { matchExpressions: [], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
      ],
      forResources: false,
    });
    expect(podView(pod!)?.preemptionPolicy).toBe('Never');
  });
});
