/**
 * The decisions of a scenario in one namespace, in a form both sides can be compared in: per pod its
 * node, phase, conditions (type = status/reason, and the message where it carries the decision),
 * requested, allocated and running CPU, nominated node; the events' reasons per component and object; and what the
 * scenario adds (an HTTP status). Names the components generate (a DaemonSet pod's suffix) are replaced
 * by the owner and node, so the two sides line up.
 */
import type { J } from './compare.js';
import type { Driver } from './scenarios.js';

export type Decisions = Record<string, unknown>;

/** Conditions whose message is the decision itself (the kubelet's or scheduler's reason in words). */
const MESSAGE_OF = new Set(['PodScheduled', 'PodResizePending', 'PodResizeInProgress']);

export async function decisionsIn(raw: Driver['raw'], ns: string): Promise<Decisions> {
  const out: Decisions = {};
  const list = (await raw('GET', `/api/v1/namespaces/${ns}/pods`)).json?.items ?? [];
  const names = new Map<string, string>();
  for (const p of list) {
    const key = podKey(p);
    names.set(p.metadata.name, key);
    const c = p.spec?.containers?.[0];
    const st = p.status?.containerStatuses?.find((s: J) => s.name === c?.name);
    const conditions: Record<string, string> = {};
    for (const cond of p.status?.conditions ?? []) {
      if (cond.type === 'PodReadyToStartContainers') continue; // kubelet-internal, not a decision
      const msg = MESSAGE_OF.has(cond.type) && cond.message ? ` "${cond.message}"` : '';
      conditions[cond.type] = `${cond.status}${cond.reason ? `/${cond.reason}` : ''}${msg}`;
    }
    out[`pod ${key}`] = {
      node: p.spec?.nodeName ?? null,
      phase: p.status?.phase,
      terminating: Boolean(p.metadata?.deletionTimestamp),
      nominated: p.status?.nominatedNodeName ?? null,
      conditions,
      requested: c?.resources?.requests?.cpu ?? null,
      allocated: st?.allocatedResources?.cpu ?? null,
      running: st?.resources?.requests?.cpu ?? null,
    };
  }
  const events = (await raw('GET', `/api/v1/namespaces/${ns}/events`)).json?.items ?? [];
  const reasons = new Map<string, Set<string>>();
  for (const e of events) {
    const by = e.source?.component || e.reportingComponent || '?';
    const who = `${by} ${e.involvedObject?.kind} ${names.get(e.involvedObject?.name) ?? genericName(e.involvedObject?.name)}`;
    const set = reasons.get(who) ?? new Set<string>();
    set.add(e.reason);
    reasons.set(who, set);
  }
  for (const [who, set] of reasons) out[`events ${who}`] = [...set].sort();
  return out;
}

/** A pod's name, or for a DaemonSet's pod `<daemonset>@<node>` (its generated suffix differs per side). */
function podKey(p: J): string {
  const owner = p.metadata?.ownerReferences?.find((o: J) => o.controller);
  if (owner?.kind === 'DaemonSet') return `${owner.name}@${p.spec?.nodeName ?? '?'}`;
  return p.metadata.name;
}

/** A generated name (`plain-x7k2p`) with its random suffix cut, for an object already gone. */
function genericName(name: string | undefined): string {
  return (name ?? '?').replace(/-[a-z0-9]{5}$/, '-*');
}

/** Each path where the two differ: `key: sim <a>, real <b>`. */
export function differences(sim: Decisions, real: Decisions): string[] {
  const out: string[] = [];
  const keys = [...new Set([...Object.keys(sim), ...Object.keys(real)])].sort();
  for (const k of keys) walk(k, sim[k], real[k], out);
  return out;
}

function walk(path: string, a: unknown, b: unknown, out: string[]): void {
  const obj = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (obj(a) && obj(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort())
      walk(`${path}.${k}`, a[k], b[k], out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b))
    out.push(`${path}: simulator ${JSON.stringify(a) ?? 'absent'}, real ${JSON.stringify(b) ?? 'absent'}`);
}
