/**
 * `recommendations install-crd` says what it will change before it changes it: the plan is the
 * difference between the VPA CRD as installed and as fleetscope's variant would leave it (crd.ts
 * withScope), path by path; `--dry-run` sends the write with dryRun=All, so the API server checks it
 * and nothing is stored. The write carries the resourceVersion that was read: a CRD changed since the
 * plan was made is refused (409), never overwritten unseen.
 */
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { RawReader } from '../k8s/raw-reader.js';
import { VPA_CRD_NAME } from '../kernel/crds/vpa.js';
import type { StatusShape } from './collect.js';
import { type CrdJson, defaultShape, scopedVpaCrd, withScope } from './crd.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export interface CrdPlan {
  action: 'create' | 'update' | 'unchanged';
  /** The status shape the CRD will have (asked for, else crd.ts defaultShape). */
  shape: StatusShape;
  /** `+ path` added, `- path` removed, `~ path` changed; the whole CRD when it is created. */
  changes: string[];
  body?: CrdJson;
}

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const named = (v: Json): v is { name: string }[] =>
  Array.isArray(v) && v.length > 0 && v.every((x) => isObject(x) && typeof x.name === 'string');

/** JSON with object keys sorted: a server hands objects back with its own key order. */
const canonical = (v: Json): string =>
  JSON.stringify(v, (_, x) =>
    isObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );

/** The paths where `after` differs from `before` (arrays of named objects matched by name). */
export function jsonChanges(before: Json, after: Json, path = ''): string[] {
  if (canonical(before) === canonical(after)) return [];
  if (named(before) && named(after)) {
    const byName = (xs: { name: string }[]) => new Map(xs.map((x) => [x.name, x]));
    return keyedChanges(byName(before), byName(after), (k) => `${path}[${k}]`);
  }
  if (isObject(before) && isObject(after))
    return keyedChanges(new Map(Object.entries(before)), new Map(Object.entries(after)), (k) =>
      path ? `${path}.${k}` : k,
    );
  return [`~ ${path}`];
}

function keyedChanges(
  before: Map<string, Json>,
  after: Map<string, Json>,
  at: (k: string) => string,
): string[] {
  const out: string[] = [];
  for (const [k, v] of after)
    out.push(...(before.has(k) ? jsonChanges(before.get(k), v, at(k)) : [`+ ${at(k)}`]));
  for (const k of before.keys()) if (!after.has(k)) out.push(`- ${at(k)}`);
  return out;
}

/** What installing the variant over `existing` (undefined: no VPA CRD) would change. */
export function planScopedCrd(existing: CrdJson | undefined, asked?: StatusShape): CrdPlan {
  const shape = asked ?? defaultShape(existing);
  if (!existing)
    return {
      action: 'create',
      shape,
      changes: [`+ CustomResourceDefinition ${VPA_CRD_NAME}`],
      body: scopedVpaCrd(shape),
    };
  const body = withScope(existing, shape);
  const changes = jsonChanges(existing, body);
  return changes.length === 0
    ? { action: 'unchanged', shape, changes }
    : { action: 'update', shape, changes, body };
}

export async function readVpaCrd(client: ClusterClient): Promise<CrdJson | undefined> {
  try {
    return await new RawReader(client).get<CrdJson>('get VPA CRD', `${CRDS}/${VPA_CRD_NAME}`);
  } catch (err) {
    if (err instanceof ClusterAccessError && err.status === 404) return undefined;
    throw err;
  }
}

/** Carries the plan out (or, with dryRun, has the API server check it and store nothing). */
export async function applyCrdPlan(
  client: ClusterClient,
  plan: CrdPlan,
  opts: { dryRun: boolean },
): Promise<void> {
  if (plan.action === 'unchanged' || !plan.body) return;
  const q = opts.dryRun ? '?dryRun=All' : '';
  const raw = new RawReader(client);
  if (plan.action === 'create') await raw.send('create VPA CRD', 'POST', `${CRDS}${q}`, plan.body);
  else await raw.send('replace VPA CRD', 'PUT', `${CRDS}/${VPA_CRD_NAME}${q}`, plan.body);
}
