/**
 * Every write that reaches a simulated apiserver's handler and changes or removes an object that
 * fleetscope did not create (no managed-by fleetscope label, no feature's ownership label, not in
 * fleetscope-system, not a Feature object or an Event): a delete, a patch or an update, each with what
 * it changed (labels, annotations, spec fields, as ./invariants/touches.ts judges them). Wraps the
 * simulator's handler in the soak's own process, as ./fleet.ts does; nothing in the simulator changes.
 */
import { ApiHandler, type RequestInfo } from '../local/sim/handler.js';
import type { Simulator } from '../local/sim/index.js';
import { OWNER_LABEL } from '../shared/features/harmless.js';
// The same words as the on/off exercises' damage (one judge of what a write did to an object).
import { fieldChanges, type Obj } from '../test/features/cluster-diff.js';
import type { Touch } from './records.js';

type Json = Obj & { metadata?: { labels?: Record<string, string> } };
type Handle = (this: ApiHandler, info: RequestInfo, req: unknown, body: string) => { status: number };
type Raw = Simulator & { state(name: string): { store: { get(c: string, k: string): Json | undefined } } };

const WRITES = new Set(['DELETE', 'PATCH', 'PUT']);
/** fleetscope's own kinds: its Feature objects, and the Events it records. */
const OWN_COLLECTIONS = new Set(['features.fleetscope.io', 'events', 'events.events.k8s.io']);

export function fleetscopeMade(collection: string, key: string, o: Json): boolean {
  const labels = o.metadata?.labels ?? {};
  return (
    labels['app.kubernetes.io/managed-by'] === 'fleetscope' ||
    OWNER_LABEL in labels ||
    OWN_COLLECTIONS.has(collection) ||
    key === 'fleetscope-system' ||
    key.startsWith('fleetscope-system/')
  );
}

export function observeTouches(sim: Simulator, into: Touch[]): () => void {
  const proto = ApiHandler.prototype as unknown as { handle: Handle };
  const original = proto.handle;
  proto.handle = function (this: ApiHandler, info, req, body) {
    if (!WRITES.has(info.method) || info.type !== 'resource' || !info.resource)
      return original.call(this, info, req, body);
    const cluster = (this as unknown as { ctx: { cluster: { name: string } } }).ctx.cluster.name;
    const store = (sim as Raw).state(cluster).store;
    const collection = info.group ? `${info.resource}.${info.group}` : info.resource;
    // A named write, or a delete of a whole collection (every object of it in the namespace).
    const keys = info.name
      ? [info.namespace ? `${info.namespace}/${info.name}` : info.name]
      : info.method === 'DELETE'
        ? listKeys(sim, cluster, collection, info.namespace)
        : [];
    const before = keys
      .map((k) => ({ key: k, was: store.get(collection, k) }))
      .filter((x): x is { key: string; was: Json } => !!x.was && !fleetscopeMade(collection, x.key, x.was));
    if (before.length === 0) return original.call(this, info, req, body);
    const record = (status: number) => {
      for (const { key, was } of before) {
        const now = store.get(collection, key);
        into.push({
          cluster,
          method: info.method,
          object: `${collection}/${key}`,
          ...(info.subresource ? { subresource: info.subresource } : {}),
          status,
          changes: now ? fieldChanges(was, now) : ['deleted'],
        });
      }
    };
    try {
      const reply = original.call(this, info, req, body);
      record(reply.status);
      return reply;
    } catch (err) {
      record((err as { code?: number }).code ?? 500);
      throw err;
    }
  };
  return () => {
    proto.handle = original;
  };
}

function listKeys(sim: Simulator, cluster: string, collection: string, namespace?: string): string[] {
  const raw = (
    sim as unknown as {
      state(n: string): { store: { collection(c: string): { keys(): readonly string[] } } };
    }
  )
    .state(cluster)
    .store.collection(collection);
  return raw.keys().filter((k) => !namespace || k.startsWith(`${namespace}/`));
}
