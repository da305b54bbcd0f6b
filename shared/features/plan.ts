/**
 * What a transition would do in one cluster, without doing it (`fleetscope features plan`): every
 * object its tasks would create, change or delete, every stored item it would clear, and what it would
 * wait for. Each write is sent to the API server as a server-side dry run (`?dryRun=All`, GA since
 * Kubernetes 1.19): admission, validation and RBAC answer as they would for the real write, and nothing
 * is persisted. A write the server would refuse is shown with the server's reason.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import { RawReader } from '../k8s/raw-reader.js';
import { type FeatureRecord, type FeatureRef, type Final, inTransition, turningTo } from './model.js';
import {
  contains,
  fieldAt,
  type KObject,
  type ObjectsApi,
  type ObjectsQuery,
  removalPatch,
} from './objects.js';
import { labelled, notOwned, ownedQuery } from './owned.js';
import { type FeatureSpec, tasksOf } from './spec.js';
import { describeObjects, type TaskSpec, titleOf } from './task-kinds.js';

export type PlannedAction = 'create' | 'change' | 'delete' | 'wait' | 'run';

export interface PlannedStep {
  /** The task it belongs to, as `features get` titles it. */
  task: string;
  action: PlannedAction;
  /** "ConfigMap widgets/widget-agent-config", "stored item balloons#policy#pool". */
  object: string;
  /** The fields a change sets or removes; what a wait waits for; why a hook is not previewed. */
  detail?: string;
  /** The server refused the dry run (it would refuse the real write too). */
  refused?: string;
}

export interface TransitionPlan {
  cluster: string;
  feature: string;
  state: string;
  to: Final;
  /** Why nothing would happen, when nothing would. */
  note?: string;
  steps: PlannedStep[];
}

export interface PlanPorts {
  objects: ObjectsApi;
  /** The sort keys of the cluster's stored items under a prefix. */
  items(prefix: string): Promise<string[]>;
  keepState: boolean;
}

/** The tasks the transition to `to` would perform from where the record stands. */
export function plannedTasks(
  spec: FeatureSpec,
  record: FeatureRecord | undefined,
  to: Final,
): TaskSpec[] | string {
  const state = record?.state ?? 'Off';
  if (state === to) return `already ${to}: no transition`;
  // Already turning that way: what is left of it. Otherwise a new (or reversing) transition.
  if (record && inTransition(state) && state === turningTo(to)) return record.tasks.map((t) => t.spec);
  return tasksOf(spec, to);
}

export async function planTransition(
  spec: FeatureSpec,
  cluster: string,
  record: FeatureRecord | undefined,
  to: Final,
  ports: PlanPorts,
): Promise<TransitionPlan> {
  const tasks = plannedTasks(spec, record, to);
  const base = { cluster, feature: `${spec.namespace}/${spec.name}`, state: record?.state ?? 'Off', to };
  if (typeof tasks === 'string') return { ...base, note: tasks, steps: [] };
  // A declared feature writes only what it created (./owned.ts): planned the same way.
  const owner = 'file' in spec.origin ? spec : undefined;
  const dry = new DryRun(ports.objects, owner);
  const steps: PlannedStep[] = [];
  for (const t of tasks)
    steps.push(...(await planTask(t, dry, ports, owner)).map((s) => ({ task: titleOf(t), ...s })));
  return { ...base, steps };
}

type Step = Omit<PlannedStep, 'task'>;

async function planTask(
  t: TaskSpec,
  dry: DryRun,
  ports: PlanPorts,
  owner: FeatureRef | undefined,
): Promise<Step[]> {
  const api = ports.objects;
  switch (t.task) {
    case 'wait-for-uses':
      return [{ action: 'wait', object: 'uses', detail: 'until no component reports the old value' }];
    case 'wait-for-no-objects': {
      const left = await api.list(t);
      return [
        {
          action: 'wait',
          object: describeObjects(t),
          detail: left.length ? `${left.length} left: ${left.map(nameOf).join(', ')}` : 'none left',
        },
      ];
    }
    case 'delete-objects':
      return Promise.all((await api.list(ownedQuery(t, owner))).map((o) => dry.write(t, o, 'delete')));
    case 'clear-field': {
      const having = (await api.list(ownedQuery(t, owner))).filter((o) => fieldAt(o, t.field) !== undefined);
      return Promise.all(
        having.map((o) =>
          dry.write(t, o, 'change', removalPatch(t.field), t.subresource, `remove ${t.field.join('.')}`),
        ),
      );
    }
    case 'apply-manifests':
      return Promise.all(t.manifests.map((m) => dry.apply(m as KObject)));
    case 'clear-state': {
      const keep = ports.keepState && t.keepDays !== undefined;
      const keys = (await Promise.all(t.prefixes.map((p) => ports.items(p)))).flat();
      return keys.map((k) => ({
        action: keep ? 'change' : 'delete',
        object: `stored item ${k}`,
        ...(keep ? { detail: `kept ${t.keepDays} days (a TTL)` } : {}),
      }));
    }
    case 'wait-for-features':
      return [{ action: 'wait', object: t.features.join(', '), detail: `until ${t.state} (requires)` }];
    case 'hook':
      return [{ action: 'run', object: t.title ?? t.hook, detail: "fleetscope's own code: not previewed" }];
  }
}

const nameOf = (o: KObject) =>
  `${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;
const what = (o: KObject, kind: string | undefined) => `${kind ?? o.kind ?? 'object'} ${nameOf(o)}`;

/** Writes sent as server-side dry runs, through the same discovery as the tasks' real writes. */
class DryRun {
  private readonly raw: RawReader;
  constructor(
    private readonly api: ObjectsApi,
    private readonly owner: FeatureRef | undefined,
  ) {
    this.raw = new RawReader(api.client);
  }

  async write(
    q: ObjectsQuery,
    o: KObject,
    action: 'delete' | 'change',
    patch?: unknown,
    sub?: 'status',
    detail?: string,
  ): Promise<Step> {
    const step: Step = { action, object: what(o, q.kind), ...(detail ? { detail } : {}) };
    const path = await this.path(q, o.metadata?.namespace, o.metadata?.name, sub);
    if (!path) return step;
    return this.send(step, () =>
      action === 'delete'
        ? this.raw.send(`dry-run delete ${q.resource ?? q.kind}`, 'DELETE', path, undefined)
        : this.raw.send(
            `dry-run patch ${q.resource ?? q.kind}`,
            'PATCH',
            path,
            patch,
            'application/merge-patch+json',
          ),
    );
  }

  async apply(declared: KObject): Promise<Step> {
    const m = this.owner ? labelled(declared, this.owner) : declared;
    const q = { apiVersion: String(m.apiVersion), kind: String(m.kind) };
    const ns = m.metadata?.namespace;
    const name = String(m.metadata?.name);
    const object = what(m, q.kind);
    const r = await this.api.resolve(q);
    if (!r)
      return { action: 'create', object, refused: `the cluster does not serve ${m.kind} (${m.apiVersion})` };
    const [live] = await this.api.list({ ...q, namespace: ns, name });
    const { status: _s, ...wanted } = m;
    const taken = live && this.owner ? notOwned(live, this.owner) : undefined;
    if (taken) return { action: 'change', object, refused: taken };
    if (!live)
      return this.send({ action: 'create', object }, async () =>
        this.raw.send(`dry-run create ${r.resource}`, 'POST', (await this.path(q, ns))!, m),
      );
    if (contains(live, wanted)) return { action: 'change', object, detail: 'nothing: it already says so' };
    const fields = changedFields(live, wanted);
    return this.send({ action: 'change', object, detail: `sets ${fields.join(', ')}` }, async () =>
      this.raw.send(
        `dry-run update ${r.resource}`,
        'PATCH',
        (await this.path(q, ns, name))!,
        wanted,
        'application/merge-patch+json',
      ),
    );
  }

  private async send(step: Step, write: () => Promise<unknown>): Promise<Step> {
    try {
      await write();
      return step;
    } catch (err) {
      if (!(err instanceof ClusterAccessError)) throw err;
      return { ...step, refused: err.message };
    }
  }

  private async path(q: ObjectsQuery, ns?: string, name?: string, sub?: string): Promise<string | undefined> {
    const r = await this.api.resolve(q);
    if (!r) return undefined;
    const enc = encodeURIComponent;
    const nsPart = r.namespaced && ns ? `/namespaces/${enc(ns)}` : '';
    return `${r.base}${nsPart}/${r.resource}${name ? `/${enc(name)}` : ''}${sub ? `/${sub}` : ''}?dryRun=All`;
  }
}

/** The dotted paths of `wanted` whose value `live` does not have. */
function changedFields(live: unknown, wanted: unknown, at = ''): string[] {
  if (wanted === null || typeof wanted !== 'object' || Array.isArray(wanted))
    return contains(live, wanted) ? [] : [at];
  return Object.entries(wanted).flatMap(([k, v]) =>
    changedFields((live as Record<string, unknown> | undefined)?.[k], v, at ? `${at}.${k}` : k),
  );
}
