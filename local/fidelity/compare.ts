/**
 * How two answers to one request are compared, by `npm run fidelity` (the simulator's answer against a
 * real kube-apiserver's) and by the replays of recorded real exchanges (test/sim/replay*.test.ts): the
 * status code, a Status body's reason, code, causes and message, and an object's shape (key sets,
 * recursively) with the stable values compared exactly. Run-specific values (resourceVersions, UIDs,
 * timestamps, generated names) are compared by shape only.
 *
 * JSON objects are unordered (RFC 8259): key order never counts. Array order does, except for
 * `conditions` (keyed by type; whichever controller ran first).
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
  'gitVersion',
  'singularName',
  'namespaced',
  'scope',
  'served',
  'storage',
  'type',
  'code',
  'reason',
  'remainingItemCount',
]);
/** Keys whose whole subtree is compared exactly (key order aside). */
const DEEP_VALUE_KEYS = new Set([
  'resources',
  'resizePolicy',
  'taints',
  'capacity',
  'allocatable',
  'labels',
  'verbs',
  'finalizers',
  'storedVersions',
]);
/** What the comparison leaves aside, each with its reason (printed with every fidelity report). */
export const LEFT_ASIDE: readonly { what: string; why: string }[] = [
  {
    what: 'run-specific values',
    why: 'resourceVersions, UIDs, timestamps and names generated from generateName differ on every run: compared by shape only',
  },
  { what: 'the order of object keys', why: 'JSON objects are unordered (RFC 8259); array order counts' },
  { what: 'the order of conditions', why: 'keyed by type; whichever controller ran first' },
  {
    what: 'managedFields',
    why: "server-side apply's bookkeeping, which the simulator does not model (fleetscope never applies)",
  },
  {
    what: 'the openshift-service-ca.crt projected source',
    why: "the handed binaries are OpenShift's build, whose admission adds it",
  },
  {
    what: "a Status message's lines after the first",
    why: 'a real server appends a go-cmp dump of its Go structs to an Invalid message, the simulator a shorter diff',
  },
];

/** Keys the comparison skips: bookkeeping a server owns, not part of the API's behaviour. */
const SKIPPED = new Set(['managedFields']);

export const isObj = (v: unknown): v is Record<string, J> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
/** The ServiceAccount admission's projected token volume: its name is random on every server. */
export const isGenerated = (v: unknown) => typeof v === 'string' && v.startsWith('kube-api-access-');

/** Equal as JSON values: objects whatever their key order, arrays item by item, generated names alike. */
export function sameValue(a: J, b: J): boolean {
  if (isGenerated(a) && isGenerated(b)) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x: J, i: number) => sameValue(x, b[i]));
  if (isObj(a)) {
    if (!isObj(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameValue(a[k], b[k]));
  }
  return a === b;
}

const show = (v: J) => JSON.stringify(v);
const differ = (path: string, sim: J, real: J) =>
  `${path}: ${show(sim)} in the simulator, ${show(real)} in the real server`;

/** What differs between the simulator's answer and the real server's, one line each. */
export function compareShapes(sim: J, real: J, path: string, out: string[]): void {
  if (isObj(sim)) {
    if (!isObj(real)) {
      out.push(`${path}: the real server answered ${show(real)?.slice(0, 80)}, not an object`);
      return;
    }
    for (const k of Object.keys(sim))
      if (!(k in real) && !SKIPPED.has(k)) out.push(`${path}.${k}: only the simulator has it`);
    for (const k of Object.keys(real))
      if (!(k in sim) && !SKIPPED.has(k)) out.push(`${path}.${k}: only the real server has it`);
    const generatedName = namedByServer(sim, real);
    for (const k of Object.keys(sim))
      if (k in real && !SKIPPED.has(k) && !(k === 'name' && generatedName))
        compareKey(k, sim[k], real[k], `${path}.${k}`, out);
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

/** Metadata whose name each server generated from the same generateName: a run-specific value. */
function namedByServer(sim: Record<string, J>, real: Record<string, J>): boolean {
  const prefix = sim.generateName;
  return (
    typeof prefix === 'string' &&
    prefix !== '' &&
    real.generateName === prefix &&
    String(sim.name).startsWith(prefix) &&
    String(real.name).startsWith(prefix)
  );
}

function compareKey(k: string, sim: J, real: J, path: string, out: string[]): void {
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
    if (!sameValue(sim, real)) out.push(differ(path, sim, real));
    return;
  }
  if (VALUE_KEYS.has(k) && !isObj(sim) && !Array.isArray(sim) && !isGenerated(sim)) {
    if (sim !== real) out.push(differ(path, sim, real));
    return;
  }
  compareShapes(sim, real, path, out);
}

export interface StatusComparison {
  /** Run-specific values (UIDs, numbers) replaced by placeholders in messages. */
  normalize?: (message: string) => string;
  /**
   * Compare whole messages, not their first lines. A real server appends a go-cmp dump of its Go
   * structs to an `Invalid` message; the simulator appends a shorter diff, so by default only the
   * first line counts.
   */
  wholeMessages?: boolean;
}

/**
 * A Status body: kind, apiVersion, status, reason, code, metadata, details (name, group, kind and the
 * causes in order, each with its reason, field and message) and the message.
 */
export function compareStatus(sim: J, real: J, out: string[], how: StatusComparison = {}): void {
  if (!isObj(real) || real.kind !== 'Status') {
    out.push(`body: the real server answered ${show(real)?.slice(0, 120)}, not a Status`);
    return;
  }
  if (!isObj(sim)) {
    out.push(`body: the simulator answered ${show(sim)?.slice(0, 120)}, not a Status`);
    return;
  }
  const normalize = how.normalize ?? ((s: string) => s);
  const text = (m: unknown) => normalize(how.wholeMessages ? String(m ?? '') : firstLine(m));
  for (const k of ['kind', 'apiVersion', 'status', 'reason', 'code'])
    if (sim[k] !== real[k]) out.push(differ(k, sim[k], real[k]));
  if (!sameValue(sim.metadata ?? {}, real.metadata ?? {}))
    out.push(differ('metadata', sim.metadata, real.metadata));
  const details = (s: J) => {
    if (!isObj(s.details)) return s.details;
    const d = { ...s.details };
    if (d.uid !== undefined) d.uid = '<uid>';
    if (Array.isArray(d.causes)) d.causes = d.causes.map((c: J) => ({ ...c, message: text(c.message) }));
    return d;
  };
  if (!sameValue(details(sim), details(real))) out.push(differ('details', details(sim), details(real)));
  if (text(sim.message) !== text(real.message))
    out.push(`message:\n    simulator ${show(text(sim.message))}\n    real      ${show(text(real.message))}`);
}

const firstLine = (m: unknown) => String(m ?? '').split('\n')[0] ?? '';
/** The servers handed to the project are OpenShift's build: its admission adds this projected source. */
const OPENSHIFT_ONLY = (source: J) => source?.configMap?.name === 'openshift-service-ca.crt';
const byType = (cs: J[]) => [...cs].sort((a, b) => String(a?.type).localeCompare(String(b?.type)));
