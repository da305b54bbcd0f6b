/**
 * A cycle's first phase: which VPAs ask for node scope, on which DaemonSets. Reads the VPA CRD
 * (installed? carries scope?), then the VPAs, then (only when some VPA asks for node scope on a
 * DaemonSet) the DaemonSets, and resolves them (targets.ts).
 */
import type { RawReader } from '../k8s/raw-reader.js';
import { type CrdState, listDaemonSets, listVpas, readCrd } from './collect.js';
import type { VpaObject } from './k8s-types.js';
import { type NodeScopeTarget, type RejectedTarget, resolveTargets } from './targets.js';

export interface FoundTargets {
  crd: CrdState;
  targets: NodeScopeTarget[];
  rejected: RejectedTarget[];
  /** The VPAs read, by namespace/name (their conditions decide what status to write). */
  vpas: Map<string, VpaObject>;
}

export const vpaKey = (namespace: string | undefined, name: string | undefined) => `${namespace}/${name}`;

export async function findTargets(reader: RawReader, pageSize: number): Promise<FoundTargets> {
  const crd = await readCrd(reader);
  if (crd === 'absent') return { crd, targets: [], rejected: [], vpas: new Map() };
  const vpas = await listVpas(reader, pageSize);
  const daemonSets = targetsNeedDaemonSets(vpas) ? await listDaemonSets(reader, pageSize) : [];
  const { targets, rejected } = resolveTargets(vpas, daemonSets);
  return {
    crd,
    targets,
    rejected,
    vpas: new Map(vpas.map((v) => [vpaKey(v.metadata?.namespace, v.metadata?.name), v])),
  };
}

/** DaemonSets are only listed when some VPA asks for node scope on one. */
function targetsNeedDaemonSets(vpas: readonly VpaObject[]): boolean {
  return vpas.some(
    (v) =>
      (v.spec?.scope || v.metadata?.annotations?.['fleetscope.io/scope']) &&
      v.spec?.targetRef?.kind === 'DaemonSet',
  );
}
