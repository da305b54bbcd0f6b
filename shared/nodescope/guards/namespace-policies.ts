/**
 * The LimitRanges and ResourceQuotas of a namespace, read once per cycle and only when a resize there
 * is about to be sent (a steady cycle reads neither), with what this cycle's resizes charged to the
 * quotas. A read that fails (RBAC from before this rule) leaves the namespace unguarded, said once:
 * the apiserver still refuses what they forbid, and the resize mechanism backs off from that.
 */
import type { CycleRun } from '../cycle-run.js';
import { describe } from '../cycle-run.js';
import type { LimitRangeLike } from './limit-range.js';
import { QuotaLedger, type ResourceQuotaLike } from './resource-quota.js';

export interface NamespacePolicies {
  limitRanges: LimitRangeLike[];
  quotas: ResourceQuotaLike[];
  ledger: QuotaLedger;
  /** Why they could not be read; then nothing is judged here. */
  unreadable?: string;
}

const perRun = new WeakMap<CycleRun, Map<string, Promise<NamespacePolicies>>>();

export function namespacePolicies(run: CycleRun, namespace: string): Promise<NamespacePolicies> {
  const byNs = perRun.get(run) ?? new Map<string, Promise<NamespacePolicies>>();
  perRun.set(run, byNs);
  const known = byNs.get(namespace);
  if (known) return known;
  const p = read(run, namespace);
  byNs.set(namespace, p);
  return p;
}

async function read(run: CycleRun, namespace: string): Promise<NamespacePolicies> {
  const list = async <T>(what: string) =>
    (
      await run.reader.get<{ items?: T[] }>(
        `list ${what}`,
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/${what}`,
      )
    ).items ?? [];
  try {
    const [limitRanges, quotas] = [
      await list<LimitRangeLike>('limitranges'),
      await list<ResourceQuotaLike>('resourcequotas'),
    ];
    return { limitRanges, quotas, ledger: new QuotaLedger() };
  } catch (err) {
    const unreadable = `LimitRanges and ResourceQuotas of namespace ${namespace} could not be read (${describe(err)}): resizes there are not guarded by them`;
    run.ctx.logger?.warn(unreadable, { namespace });
    run.errors.push(unreadable);
    return { limitRanges: [], quotas: [], ledger: new QuotaLedger(), unreadable };
  }
}
