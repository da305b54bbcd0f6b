import { describe, expect, it } from 'vitest';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { detailSchemas } from '../../shared/platform/events.js';
import {
  desiredDigest,
  observeResize,
  type PodLike,
  planResize,
  qosClassOf,
  type ResizeApi,
  type ResizeRecord,
  Resizer,
  resizeEventDetail,
  resizeMetricName,
} from '../../shared/resize/index.js';

const HOUR = 3_600_000;

function pod(
  over: {
    rv?: string;
    cpu?: string;
    uid?: string;
    conditions?: PodLike['status'] extends infer S ? (S extends { conditions?: infer C } ? C : never) : never;
  } = {},
): PodLike {
  return {
    metadata: {
      name: 'agent-x',
      namespace: 'mon',
      uid: over.uid ?? 'uid-1',
      resourceVersion: over.rv ?? '10',
    },
    spec: {
      nodeName: 'n1',
      containers: [
        {
          name: 'a',
          resources: { requests: { cpu: over.cpu ?? '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
        },
        { name: 'b', resources: { requests: { cpu: '50m' } } },
      ],
    },
    status: {
      phase: 'Running',
      conditions: over.conditions ?? [],
      containerStatuses: [
        {
          name: 'a',
          resources: { requests: { cpu: over.cpu ?? '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
        },
        { name: 'b', resources: { requests: { cpu: '50m' } } },
      ],
    },
  };
}

const httpError = (status: number, detail = 'x') =>
  new ClusterAccessError({
    cluster: 'c',
    operation: 'resize pod',
    kind: 'http',
    status,
    retryable: false,
    detail,
  });

class FakeApi implements ResizeApi {
  calls: string[] = [];
  patches: object[] = [];
  constructor(
    private readonly patchResults: (PodLike | Error)[],
    private readonly reads: (PodLike | undefined)[] = [],
  ) {}
  async patchResize(_ns: string, _name: string, body: object): Promise<PodLike> {
    this.calls.push('PATCH');
    this.patches.push(body);
    const r = this.patchResults.shift();
    if (!r) throw new Error('unexpected patch');
    if (r instanceof Error) throw r;
    return r;
  }
  async readPod(): Promise<PodLike | undefined> {
    this.calls.push('GET');
    return this.reads.shift();
  }
}

describe('resize requests', () => {
  it('patches only the changed cpu/memory values, keyed by container name, with the resourceVersion as precondition', () => {
    const plan = planResize(pod(), {
      a: { requests: { cpu: 250, memory: 134217728 }, limits: { memory: 536870912 } },
    });
    expect(plan).toEqual({
      kind: 'plan',
      plan: {
        body: {
          metadata: { resourceVersion: '10' },
          spec: {
            containers: [
              { name: 'a', resources: { requests: { cpu: '250m' }, limits: { memory: '512Mi' } } },
            ],
          },
        },
        changes: [
          {
            name: 'a',
            before: { requests: { cpu: 100, memory: 134217728 }, limits: { memory: 268435456 } },
            after: { requests: { cpu: 250, memory: 134217728 }, limits: { memory: 536870912 } },
          },
        ],
      },
    });
    expect(planResize(pod(), { a: { requests: { cpu: 100 } } })).toEqual({ kind: 'noop' });
  });

  it('refuses locally what the apiserver would refuse: a limit added, a request above its limit, a QoS change', () => {
    expect(planResize(pod(), { b: { limits: { cpu: 100 } } })).toMatchObject({
      kind: 'invalid',
      message: 'container b: a cpu limit cannot be added by a resize',
    });
    expect(planResize(pod(), { a: { requests: { memory: 300 * 2 ** 20 } } })).toMatchObject({
      kind: 'invalid',
      message: 'container a: memory request 300Mi would exceed its limit 256Mi',
    });
    const guaranteed: PodLike = {
      metadata: { name: 'g', uid: 'g' },
      spec: {
        containers: [
          {
            name: 'a',
            resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
          },
        ],
      },
    };
    expect(planResize(guaranteed, { a: { requests: { cpu: 500 } } })).toMatchObject({
      kind: 'invalid',
      message: "the pod's QoS class would change from Guaranteed to Burstable, which a resize may not do",
    });
    expect(qosClassOf([{ requests: { cpu: 1, memory: 1 }, limits: { cpu: 1, memory: 2 } }])).toBe(
      'Burstable',
    );
    expect(qosClassOf([{ requests: { cpu: 1 }, limits: { cpu: 1, memory: 2 } }])).toBe('Guaranteed');
  });

  it('reads the resize state from conditions (1.33+), from status.resize before, and from spec vs actual', () => {
    const pending = (reason: string) =>
      pod({ conditions: [{ type: 'PodResizePending', status: 'True', reason, message: 'm' }] });
    expect(observeResize(pending('Deferred'))).toEqual({
      state: 'deferred',
      reason: 'Deferred',
      message: 'm',
    });
    expect(observeResize(pending('Infeasible'))).toEqual({
      state: 'infeasible',
      reason: 'Infeasible',
      message: 'm',
    });
    expect(
      observeResize(
        pod({ conditions: [{ type: 'PodResizeInProgress', status: 'True', reason: 'Error', message: 'e' }] }),
      ),
    ).toEqual({ state: 'error', reason: 'Error', message: 'e' });
    const legacy = pod();
    (legacy.status as { resize?: string }).resize = 'Infeasible';
    expect(observeResize(legacy).state).toBe('infeasible');
    const notYet = pod();
    (notYet.spec?.containers?.[0]?.resources?.requests as Record<string, string>).cpu = '200m';
    expect(observeResize(notYet).state).toBe('in-progress');
    expect(observeResize(pod()).state).toBe('none');
  });
});

describe('the Resizer', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('on 409 reads the pod again and retries the request rebuilt for it', async () => {
    const api = new FakeApi(
      [httpError(409, 'the object has been modified'), pod({ rv: '12', cpu: '250m' })],
      [pod({ rv: '11' })],
    );
    const r = new Resizer(api, { now: clock });
    const res = await r.resize({ pod: pod(), desired: { a: { requests: { cpu: 250 } } } }, undefined);
    expect(api.calls).toEqual(['PATCH', 'GET', 'PATCH']);
    expect((api.patches[1] as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe('11');
    expect(res.requests).toBe(3);
    expect(res.report).toMatchObject({ kind: 'resized', outcome: 'Requested' });
    expect(res.record).toMatchObject({ state: 'requested', podUid: 'uid-1' });
  });

  it('stops after a 409 when the pod was replaced, and when it already has what was asked', async () => {
    const replaced = new FakeApi([httpError(409)], [pod({ uid: 'other' })]);
    expect(
      (
        await new Resizer(replaced, { now: clock }).resize(
          { pod: pod(), desired: { a: { requests: { cpu: 250 } } } },
          undefined,
        )
      ).report,
    ).toMatchObject({ kind: 'refused', refusal: 'Gone' });
    const done = new FakeApi([httpError(409)], [pod({ cpu: '250m' })]);
    const res = await new Resizer(done, { now: clock }).resize(
      { pod: pod(), desired: { a: { requests: { cpu: 250 } } } },
      undefined,
    );
    expect(done.calls).toEqual(['PATCH', 'GET']);
    expect(res.report).toBeUndefined();
  });

  it('tells a server without pods/resize (404, the pod exists) from a deleted pod, and stops asking', async () => {
    const api = new FakeApi([httpError(404)], [pod()]);
    const r = new Resizer(api, { now: clock });
    const res = await r.resize({ pod: pod(), desired: { a: { requests: { cpu: 250 } } } }, undefined);
    expect(res.report).toMatchObject({ kind: 'refused', refusal: 'Unsupported' });
    expect(r.unsupported).toMatch(/no pods\/resize subresource/);
    expect(r.mayRequest(pod(), { a: { requests: { cpu: 300 } } }, undefined)).toMatchObject({ ok: false });
    const gone = new FakeApi([httpError(404)], [undefined]);
    expect(
      (
        await new Resizer(gone, { now: clock }).resize(
          { pod: pod(), desired: { a: { requests: { cpu: 250 } } } },
          undefined,
        )
      ).report,
    ).toMatchObject({ refusal: 'Gone' });
  });

  it('turns each refusal of the apiserver into its kind, backed off as the kind wants', async () => {
    const desired = { a: { requests: { cpu: 250 } } };
    const cases: [Error[], string, string, number][] = [
      [[httpError(403, 'no')], 'Forbidden', 'rejected', HOUR],
      [[httpError(422, 'bad')], 'Invalid', 'rejected', HOUR],
      [[httpError(503, 'down')], 'Error', 'error', 5 * 60_000],
      // Conflicts past the retries (2 by default): each read finds the pod still needing the resize.
      [[httpError(409), httpError(409), httpError(409)], 'Conflict', 'error', 5 * 60_000],
    ];
    for (const [errors, refusal, state, wait] of cases) {
      const patches = errors.length;
      const api = new FakeApi(errors, [pod(), pod()]);
      const res = await new Resizer(api, { now: clock }).resize({ pod: pod(), desired }, undefined);
      expect(res.report, refusal).toMatchObject({ kind: 'refused', refusal, retryAfter: now + wait });
      expect(res.report?.containers.length, refusal).toBeGreaterThan(0);
      expect(res.record, refusal).toMatchObject({ state, attempts: 1, nextAttemptAt: now + wait });
      expect(res.requests, refusal).toBe(patches * 2 - 1);
    }
  });

  it('waits while Deferred, backs off after Infeasible, and never repeats a refused request', async () => {
    const r = new Resizer(new FakeApi([]), { now: clock });
    const desired = { a: { requests: { cpu: 250 } } };
    const requested: ResizeRecord = {
      podUid: 'uid-1',
      desired: desiredDigest(desired),
      state: 'requested',
      since: now,
      attempts: 0,
    };
    const deferredPod = pod({
      cpu: '250m',
      conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Deferred', message: 'busy' }],
    });
    const d = r.observe(deferredPod, requested);
    expect(d.record?.state).toBe('deferred');
    expect(d.report).toMatchObject({ kind: 'refused', refusal: 'Deferred', message: 'busy' });
    expect(r.observe(deferredPod, d.record).report).toBeUndefined();
    expect(r.mayRequest(deferredPod, desired, d.record)).toMatchObject({ ok: false });
    const infeasiblePod = pod({
      cpu: '250m',
      conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible', message: 'too big' }],
    });
    const inf = r.observe(infeasiblePod, requested);
    expect(inf.record).toMatchObject({ state: 'infeasible', attempts: 1, nextAttemptAt: now + HOUR });
    expect(resizeMetricName(inf.report!)).toBe('PodResizesInfeasible');
    expect(r.mayRequest(infeasiblePod, desired, inf.record)).toMatchObject({ ok: false });
    expect(r.mayRequest(infeasiblePod, { a: { requests: { cpu: 200 } } }, inf.record)).toMatchObject({
      ok: false,
    });
    now += HOUR;
    expect(r.mayRequest(infeasiblePod, desired, inf.record)).toMatchObject({ ok: false });
    expect(r.mayRequest(infeasiblePod, { a: { requests: { cpu: 200 } } }, inf.record)).toEqual({ ok: true });
    const completed = r.observe(pod({ cpu: '250m' }), requested);
    expect(completed).toMatchObject({ report: { kind: 'resized', outcome: 'Completed' } });
    expect(completed.record).toBeUndefined();
    // A recreated pod starts afresh.
    expect(r.mayRequest(pod({ uid: 'new' }), desired, inf.record)).toEqual({ ok: true });
  });

  it('records apiserver refusals with back-off that doubles', async () => {
    const api = new FakeApi([httpError(422, 'Pod QOS Class may not change'), httpError(422, 'again')]);
    const r = new Resizer(api, { now: clock });
    const first = await r.resize({ pod: pod(), desired: { a: { requests: { cpu: 250 } } } }, undefined);
    expect(first.record).toMatchObject({ state: 'rejected', attempts: 1, nextAttemptAt: now + HOUR });
    expect(first.report).toMatchObject({ refusal: 'Invalid', message: 'Pod QOS Class may not change' });
    const second = await r.resize({ pod: pod(), desired: { a: { requests: { cpu: 260 } } } }, first.record);
    expect(second.record).toMatchObject({ attempts: 2, nextAttemptAt: now + 2 * HOUR });
  });

  it('turns reports into valid PodResized / PodResizeRefused events', async () => {
    const api = new FakeApi([pod({ cpu: '250m' })]);
    const res = await new Resizer(api, { now: clock }).resize(
      { pod: pod(), desired: { a: { requests: { cpu: 250 } } } },
      undefined,
    );
    const e = resizeEventDetail(res.report!, {
      cluster: 'c1',
      source: 'nodescope',
      owner: { kind: 'DaemonSet', name: 'agent' },
    });
    expect(e.detailType).toBe('PodResized');
    expect(detailSchemas.PodResized.parse(e.detail).containers).toEqual([
      {
        name: 'a',
        before: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
        after: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '256Mi' } },
      },
    ]);
    const refused = resizeEventDetail(
      {
        kind: 'refused',
        refusal: 'Infeasible',
        message: 'm',
        namespace: 'mon',
        pod: 'p',
        podUid: 'u',
        containers: [],
        retryAfter: now,
        at: now,
      },
      { cluster: 'c1', source: 'nodescope' },
    );
    expect(detailSchemas.PodResizeRefused.parse(refused.detail).refusal).toBe('Infeasible');
  });
});
