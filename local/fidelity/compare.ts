/**
 * How two answers to one request are compared: the status code, a Status body's reason, code and
 * causes, and an object's shape (key sets, recursively) with the stable values compared exactly. Run-
 * specific values (resourceVersions, UIDs, timestamps, generated names) are compared by shape only.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of arbitrary shape
export type J = any;

/** Keys whose values are compared exactly (the rest of an object is compared by shape). */
const VALUE_KEYS = new Set([
  'kind',
  'apiVersion',
  'name',
  'namespace',
  'phase',
  'qosClass',
  'resize',
  'image',
  'preemptionPolicy',
  'value',
  'groupVersion',
  'singularName',
  'namespaced',
  'scope',
  'served',
  'storage',
  'type',
  'code',
  'reason',
]);
/** Keys whose whole subtree is compared exactly. */
const DEEP_VALUE_KEYS = new Set([
  'resources',
  'resizePolicy',
  'taints',
  'capacity',
  'allocatable',
  'labels',
  'verbs',
]);
/** Keys the comparison skips: bookkeeping a server owns, not part of the API's behaviour. */
const SKIPPED = new Set(['managedFields']);

export const isObj = (v: unknown): v is Record<string, J> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const isGenerated = (v: unknown) => typeof v === 'string' && v.startsWith('kube-api-access-');

/** What differs between the simulator's answer and the real server's, one line each. */
export function compareShapes(sim: J, real: J, path: string, out: string[]): void {
  if (isObj(sim)) {
    if (!isObj(real)) {
      out.push(`${path}: the real server answered ${JSON.stringify(real)?.slice(0, 80)}, not an object`);
      return;
    }
    for (const k of Object.keys(sim))
      if (!(k in real) && !SKIPPED.has(k)) out.push(`${path}.${k}: only the simulator has it`);
    for (const k of Object.keys(real))
      if (!(k in sim) && !SKIPPED.has(k)) out.push(`${path}.${k}: only the real server has it`);
    for (const k of Object.keys(sim))
      if (k in real && !SKIPPED.has(k)) compareKey(k, sim[k], real[k], `${path}.${k}`, out);
    return;
  }
  if (Array.isArray(sim)) {
    if (!Array.isArray(real)) out.push(`${path}: the real server answered no array`);
    else if (sim.length !== real.length)
      out.push(`${path}: ${sim.length} items in the simulator, ${real.length} in the real server`);
    else
      sim.forEach((s: J, i: number) => {
        compareShapes(s, real[i], `${path}[${i}]`, out);
      });
  }
}

function compareKey(k: string, sim: J, real: J, path: string, out: string[]): void {
  // Conditions are keyed by type; their order is whichever controller ran first.
  if (k === 'conditions' && Array.isArray(sim) && Array.isArray(real)) {
    compareShapes(byType(sim), byType(real), path, out);
    return;
  }
  if (k === 'sources' && Array.isArray(real)) {
    compareShapes(
      sim,
      real.filter((x: J) => !OPENSHIFT_ONLY(x)),
      path,
      out,
    );
    return;
  }
  if (DEEP_VALUE_KEYS.has(k)) {
    if (JSON.stringify(sim) !== JSON.stringify(real))
      out.push(
        `${path}: ${JSON.stringify(sim)} in the simulator, ${JSON.stringify(real)} in the real server`,
      );
    return;
  }
  if (VALUE_KEYS.has(k) && !isObj(sim) && !Array.isArray(sim) && !isGenerated(sim)) {
    if (sim !== real)
      out.push(
        `${path}: ${JSON.stringify(sim)} in the simulator, ${JSON.stringify(real)} in the real server`,
      );
    return;
  }
  compareShapes(sim, real, path, out);
}

/** A Status body: kind, status, reason, code and the causes' (reason, field) pairs; the message's first line. */
export function compareStatus(sim: J, real: J, out: string[], normalize: (s: string) => string): void {
  if (!isObj(real) || real.kind !== 'Status') {
    out.push(`body: the real server answered ${JSON.stringify(real)?.slice(0, 120)}, not a Status`);
    return;
  }
  for (const k of ['status', 'reason', 'code'])
    if (sim[k] !== real[k])
      out.push(
        `${k}: ${JSON.stringify(sim[k])} in the simulator, ${JSON.stringify(real[k])} in the real server`,
      );
  const causes = (s: J) =>
    JSON.stringify((s.details?.causes ?? []).map((c: J) => `${c.reason}@${c.field ?? ''}`).sort());
  if (causes(sim) !== causes(real))
    out.push(`causes: ${causes(sim)} in the simulator, ${causes(real)} in the real server`);
  const first = (m: unknown) => normalize(String(m ?? '').split('\n')[0] ?? '');
  if (first(sim.message) !== first(real.message))
    out.push(
      `message:\n    simulator ${JSON.stringify(first(sim.message))}\n    real      ${JSON.stringify(first(real.message))}`,
    );
}

/** The servers handed to the project are OpenShift's build: its admission adds this projected source. */
const OPENSHIFT_ONLY = (source: J) => source?.configMap?.name === 'openshift-service-ca.crt';
const byType = (cs: J[]) => [...cs].sort((a, b) => String(a?.type).localeCompare(String(b?.type)));
