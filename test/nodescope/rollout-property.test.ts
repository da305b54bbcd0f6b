/**
 * The rollout's property test (issue 30, part 5): random DaemonSets (2 to 30 pods, canary share, soak),
 * every pod due for a downsize, harm of each kind injected on downsized pods at random cycles, driven
 * through the apply path's rollout step (rollout-step.ts) with the real resize mechanism over a fake
 * pods/resize. Invariants: before a wave is released only its canaries (at most the share) are
 * downsized; the rest never before the soak; nothing is downsized while held; a harmed pod is reverted
 * to exactly its previous size in the same cycle, the hold doubling per revert in a row; no pod is
 * downsized back to a size it was reverted from. Each dangerous path is counted, as decided (the
 * outcome's paths) and as done (a canary wave applied, the rest applied after the soak, a hold blocking
 * a due downsize, a revert sent), and none may be zero.
 */
import { describe, expect, it } from 'vitest';
import { podLikeOf } from '../../shared/cycle/pod-like.js';
import type { PodView } from '../../shared/cycle/views.js';
import { prng } from '../../shared/kernel/prng.js';
import type { UpdateDecision } from '../../shared/nodescope/apply.js';
import { canaryCount } from '../../shared/nodescope/canary.js';
import type { CycleRun } from '../../shared/nodescope/cycle-run.js';
import { Budget } from '../../shared/nodescope/cycle-run.js';
import { DEFAULT_HOLD } from '../../shared/nodescope/revert.js';
import {
  emptyRollout,
  type HarmKind,
  type RolloutPath,
  type RolloutRecord,
} from '../../shared/nodescope/rollout.js';
import { RolloutStep } from '../../shared/nodescope/rollout-step.js';
import { DEFAULT_SETTINGS } from '../../shared/nodescope/settings.js';
import type { NodeScopeTarget } from '../../shared/nodescope/targets.js';
import { type PodLike, type ResizeRecord, Resizer } from '../../shared/resize/index.js';

const MIN = 60_000;
const CYCLE = 5 * MIN;
const Mi = 2 ** 20;

interface ModelPod {
  view: PodView;
  target: { cpu: number; memory: number };
}

function podView(node: string, k: number): PodView {
  return {
    name: `agent-${k}`,
    namespace: 'ns',
    uid: `uid-${k}`,
    node,
    phase: 'Running',
    terminating: false,
    balloon: false,
    resize: { state: 'none' },
    containers: [{ name: 'c', reqCpu: 400, reqMem: 400 * Mi, limMem: 800 * Mi, hasActual: false }],
  };
}

/** pods/resize that accepts every patch: the model takes the reports' after values. */
const fakeApi = (pods: Map<string, ModelPod>) => ({
  async patchResize(_ns: string, name: string): Promise<PodLike> {
    const p = [...pods.values()].find((x) => x.view.name === name) as ModelPod;
    return podLikeOf(p.view);
  },
  async readPod(_ns: string, name: string): Promise<PodLike | undefined> {
    const p = [...pods.values()].find((x) => x.view.name === name);
    return p && podLikeOf(p.view);
  },
});

function decisionFor(p: ModelPod): UpdateDecision | undefined {
  const c = p.view.containers[0] as PodView['containers'][number];
  if (c.reqCpu === p.target.cpu && c.reqMem === p.target.memory) return undefined;
  const ratio = (c.limMem ?? 0) / (c.reqMem ?? 1);
  return {
    node: p.view.node,
    pod: p.view,
    desired: {
      c: {
        requests: { cpu: p.target.cpu, memory: p.target.memory },
        limits: { memory: Math.round(p.target.memory * ratio) },
      },
    },
    fresh: false,
    outsideRange: true,
    quickOom: false,
    scaleUp: p.target.memory > (c.reqMem ?? 0),
    resourceDiff: 1,
    why: 'test',
  };
}

const HARMS: HarmKind[] = ['OOMKilled', 'Restarted', 'NotReady', 'Throttled'];
const PATHS: RolloutPath[] = [
  'canary-sent',
  'soak-waited',
  'rest-after-soak',
  'held-on-backoff',
  'revert-OOMKilled',
  'revert-Restarted',
  'revert-NotReady',
  'revert-Throttled',
];

async function runOne(seed: number, counts: Map<string, number>): Promise<void> {
  const rnd = prng(seed);
  const n = 2 + Math.floor(rnd() * 29);
  const share = [0.05, 0.1, 0.25, 0.5][Math.floor(rnd() * 4)] as number;
  const soakMs = (2 + Math.floor(rnd() * 8)) * CYCLE;
  const target = {
    ds: { namespace: 'ns', name: 'agent', uid: 'ds' },
    vpa: { namespace: 'ns', name: 'agent', uid: 'vpa' },
    rollout: { canaryShare: share, soakMs, revertWindowMs: 60 * MIN },
  } as NodeScopeTarget;
  const pods = new Map<string, ModelPod>();
  for (let k = 0; k < n; k++)
    pods.set(`node-${k}`, { view: podView(`node-${k}`, k), target: { cpu: 100, memory: 100 * Mi } });
  let now = Date.UTC(2026, 11, 1);
  let record: RolloutRecord = emptyRollout();
  const records: Record<string, ResizeRecord> = {};
  let lastConsecutive = 0;
  for (let cycle = 0; cycle < 120; cycle++) {
    now += CYCLE;
    const throttled = new Map<string, number>();
    // Harm on downsized pods (never on a pod the test already harmed this window).
    const harmed = new Map<string, HarmKind>();
    for (const [node, d] of Object.entries(record.downsized)) {
      if (d.harm || now - d.at > 60 * MIN || rnd() > 0.08) continue;
      const kind = HARMS[Math.floor(rnd() * HARMS.length)] as HarmKind;
      if (kind === 'Restarted' && !d.actuated) continue;
      const p = pods.get(node) as ModelPod;
      const c = p.view.containers[0] as PodView['containers'][number];
      if (kind === 'OOMKilled')
        p.view = { ...p.view, containers: [{ ...c, oomAt: Math.floor(now / 1000) * 1000 - 1000 }] };
      if (kind === 'Restarted') p.view = { ...p.view, restarts: (p.view.restarts ?? 0) + 1 };
      if (kind === 'NotReady') p.view = { ...p.view, notReady: true };
      if (kind === 'Throttled') throttled.set(node, 0.6);
      harmed.set(node, kind);
    }
    const views = new Map([...pods].map(([node, p]) => [node, p.view]));
    const reports: CycleRun['reports'] = [];
    const run = {
      now,
      budget: new Budget(1000),
      settings: { ...DEFAULT_SETTINGS, revertHold: DEFAULT_HOLD },
      reports,
      ctx: {},
    } as unknown as CycleRun;
    const resizer = new Resizer(fakeApi(pods), { now: () => now });
    const recs = {
      all: records,
      set(node: string, r: ResizeRecord | undefined) {
        if (r) records[node] = r;
        else delete records[node];
      },
    };
    const waveBefore = record.wave;
    const holdBefore = record.hold;
    const step = new RolloutStep(run, { target, pods: views, stored: record, folded: false, throttled });
    await step.revertHarmed(resizer, recs);
    const reverted = new Set(step.outcome.reverts.map((e) => e.node));
    for (const [node, kind] of harmed)
      expect(
        reverted.has(node),
        `${node} harmed (${kind}) and reverted: ${JSON.stringify({ o: step.outcome, d: step.record.downsized[node], rec: records[node], view: views.get(node) })}`,
      ).toBe(true);
    const decisions = [...pods.values()].flatMap((p) => decisionFor(p) ?? []);
    const sent: string[] = [];
    // As the apply path does: keep (never back to a reverted-from size), the guards (none here), the gate.
    const kept = decisions.flatMap((d) => step.keep(d) ?? []);
    for (const d of step.gate(kept)) {
      const r = await resizer.resize({ pod: podLikeOf(d.pod), desired: d.desired }, records[d.node]);
      recs.set(d.node, r.record);
      if (r.report) {
        reports.push({ report: r.report, owner: { kind: 'DaemonSet', name: 'agent' } });
        step.noteResized(d, r.report);
      }
      if (r.report?.kind === 'resized') sent.push(d.node);
    }
    const o = step.finish();
    for (const path of o.paths) counts.set(path, (counts.get(path) ?? 0) + 1);
    countApplied(counts, o, waveBefore, sent, reverted);
    // The model takes every resize sent (reverts and downsizes), as a kubelet that actuates at once.
    for (const { report } of reports) {
      if (report.kind !== 'resized' || report.outcome !== 'Requested') continue;
      const p = pods.get(report.node ?? '') as ModelPod;
      const after = report.containers[0]?.after;
      const c = p.view.containers[0] as PodView['containers'][number];
      p.view = {
        ...p.view,
        notReady: undefined,
        containers: [
          {
            ...c,
            reqCpu: after?.requests?.cpu ?? c.reqCpu,
            reqMem: after?.requests?.memory ?? c.reqMem,
            limMem: after?.limits?.memory ?? c.limMem,
          },
        ],
      };
    }
    for (const e of o.reverts) {
      // Back at exactly the size before the downsize.
      const p = pods.get(e.node) as ModelPod;
      expect(p.view.containers[0]?.reqMem).toBe(e.to.c?.requests?.memory);
      expect(p.view.containers[0]?.reqCpu).toBe(e.to.c?.requests?.cpu);
      // Upstream's next recommendation after harm: the memory it was reverted from plus a fifth.
      p.target = { cpu: p.target.cpu, memory: Math.round((e.from.c?.requests?.memory ?? 0) * 1.2) };
    }
    if (o.reverts.length > 0) {
      const hold = step.record.hold;
      expect(hold?.consecutive).toBe(lastConsecutive + o.reverts.length);
      const ms = Math.min(DEFAULT_HOLD.maxMs, DEFAULT_HOLD.baseMs * 2 ** ((hold?.consecutive ?? 1) - 1));
      expect((hold?.until ?? 0) - (hold?.at ?? 0)).toBe(ms);
    }
    lastConsecutive = step.record.hold?.consecutive ?? 0;
    const downs = sent.filter((node) => !reverted.has(node));
    if (holdBefore && now < holdBefore.until) expect(downs).toEqual([]);
    if (step.record.hold && now < step.record.hold.until) expect(downs).toEqual([]);
    const wave = step.record.wave;
    if (downs.length > 0 && wave?.releasedAt === undefined) {
      const canaries = new Set(wave?.canaries ?? []);
      for (const node of downs) expect(canaries.has(node), `${node} is a canary`).toBe(true);
      expect(canaries.size).toBeLessThanOrEqual(canaryCount(share, n));
    }
    if (wave?.releasedAt !== undefined && waveBefore?.releasedAt === undefined)
      expect(now - wave.startedAt).toBeGreaterThanOrEqual(soakMs);
    // No downsize goes back to (or below) a value a node was reverted from.
    for (const { report } of reports) {
      if (report.kind !== 'resized' || reverted.has(report.node ?? '')) continue;
      const from = record.revertedFrom[report.node ?? '']?.size.c?.requests;
      const ch = report.containers[0];
      for (const res of ['cpu', 'memory'] as const) {
        const a = ch?.after.requests?.[res];
        const b = ch?.before.requests?.[res];
        const bad = from?.[res];
        if (a !== undefined && b !== undefined && a < b && bad !== undefined) {
          expect(a).toBeGreaterThan(bad);
          counts.set('avoided-checked', (counts.get('avoided-checked') ?? 0) + 1);
        }
      }
    }
    record = step.record;
  }
}

/**
 * What the paths say was decided, seen done: a wave's canaries downsized, the rest downsized after the
 * soak released the wave, a downsize due but blocked by the hold (none sent), a revert sent.
 */
const APPLIED = ['canary-applied', 'rest-applied', 'hold-blocked', 'revert-sent'] as const;

function countApplied(
  counts: Map<string, number>,
  o: ReturnType<RolloutStep['finish']>,
  waveBefore: RolloutRecord['wave'],
  sent: string[],
  reverted: Set<string>,
): void {
  const add = (k: (typeof APPLIED)[number]) => counts.set(k, (counts.get(k) ?? 0) + 1);
  const downs = sent.filter((node) => !reverted.has(node));
  const canaries = new Set(o.wave?.canaries ?? []);
  if (o.canariesSent > 0 && downs.some((n) => canaries.has(n))) add('canary-applied');
  // Released by a soak of this wave (not a fresh one): nodes beyond its canaries downsized.
  const released = o.wave?.releasedAt !== undefined && waveBefore?.startedAt === o.wave.startedAt;
  if (released && o.restSent > 0 && downs.some((n) => !canaries.has(n))) add('rest-applied');
  if (o.heldOnBackoff > 0 && downs.length === 0) add('hold-blocked');
  if (o.reverts.some((e) => e.sent)) add('revert-sent');
}

describe('rollout property: canary, soak, revert, hold', () => {
  it('keeps its invariants over random DaemonSets and hits every dangerous path', async () => {
    const counts = new Map<string, number>();
    for (let seed = 1; seed <= 60; seed++) await runOne(seed, counts);
    const figures = Object.fromEntries(PATHS.map((p) => [p, counts.get(p) ?? 0]));
    console.log('rollout paths hit:', JSON.stringify(figures));
    console.log(
      'rollout outcomes seen done:',
      JSON.stringify(Object.fromEntries(APPLIED.map((k) => [k, counts.get(k) ?? 0]))),
    );
    for (const p of [...PATHS, ...APPLIED, 'avoided-checked'])
      expect(counts.get(p) ?? 0, `path ${p} never hit`).toBeGreaterThan(0);
  }, 60_000);
});
