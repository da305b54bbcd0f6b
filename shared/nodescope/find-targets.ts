/**
 * A cycle's first phase: which VPAs ask for node scope, on which DaemonSets. Reads the VPA CRD
 * (installed? carries scope?), then the VPAs, then (only when some VPA asks fleetscope for something)
 * upstream VPA's components (upstream-read.ts), then (only when some VPA asks for node scope on a
 * DaemonSet) the DaemonSets, and resolves them (targets.ts).
 */
import type { RawReader } from '../k8s/raw-reader.js';
import { type CrdState, listDaemonSets, listVpas, readCrdFacts, type VpaCrdFacts } from './collect.js';
import type { VpaObject } from './k8s-types.js';
import { type NodeScopeTarget, type RejectedTarget, resolveTargets, type SkippedVpa } from './targets.js';
import { readUpstreamVpa } from './upstream-read.js';
import { FLEETSCOPE_RECOMMENDER, NOT_READ, recommendersOf, type UpstreamVpa } from './upstream-vpa.js';

export interface FoundTargets {
  crd: CrdState;
  /** The status shape the CRD keeps (collect.ts). */
  crdFacts: VpaCrdFacts;
  targets: NodeScopeTarget[];
  rejected: RejectedTarget[];
  /** Scoped VPAs left to another recommender. */
  skipped: SkippedVpa[];
  /** Upstream VPA's components, as found (read only when some VPA asks fleetscope for something). */
  upstream: UpstreamVpa;
  /** The VPAs read, by namespace/name (their conditions decide what status to write). */
  vpas: Map<string, VpaObject>;
}

export const vpaKey = (namespace: string | undefined, name: string | undefined) => `${namespace}/${name}`;

export async function findTargets(reader: RawReader, pageSize: number): Promise<FoundTargets> {
  const crdFacts = await readCrdFacts(reader);
  const crd = crdFacts.state;
  if (crd === 'absent')
    return { crd, crdFacts, targets: [], rejected: [], skipped: [], upstream: NOT_READ, vpas: new Map() };
  const vpas = await listVpas(reader, pageSize);
  const upstream = vpas.some(asksFleetscope) ? await readUpstreamVpa(reader) : NOT_READ;
  const daemonSets = targetsNeedDaemonSets(vpas) ? await listDaemonSets(reader, pageSize) : [];
  const { targets, rejected, skipped } = resolveTargets(vpas, daemonSets, upstream);
  return {
    crd,
    crdFacts,
    targets,
    rejected,
    skipped,
    upstream,
    vpas: new Map(vpas.map((v) => [vpaKey(v.metadata?.namespace, v.metadata?.name), v])),
  };
}

/** A VPA that asks for a scope or names fleetscope: the only ones upstream's presence matters for. */
const asksFleetscope = (v: VpaObject) =>
  Boolean(v.spec?.scope || v.metadata?.annotations?.['fleetscope.io/scope']) ||
  recommendersOf(v).includes(FLEETSCOPE_RECOMMENDER);

/** DaemonSets are only listed when some VPA asks for node scope on one. */
function targetsNeedDaemonSets(vpas: readonly VpaObject[]): boolean {
  return vpas.some(
    (v) =>
      (v.spec?.scope || v.metadata?.annotations?.['fleetscope.io/scope']) &&
      v.spec?.targetRef?.kind === 'DaemonSet',
  );
}
