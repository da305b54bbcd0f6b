/**
 * The built-in task kinds (`task:` in a declaration) a feature's transitions are made of, with the schema of each one's parameters
 * (the same for features declared in TypeScript next to a capability and for third-party features
 * declared in a file), and the one line that tells people what a task does. Pure: no clients.
 *
 *   wait-for-uses        clear the uses, wait, done when no component still reports the old value
 *   wait-for-no-objects  done when no object of a kind (and selector) is left; never deletes (the KEP's
 *                        volume-type story: an admin removes them, the transition waits)
 *   clear-field          remove a field from every object that has it (a feature that added a field)
 *   delete-objects       delete the objects of a kind (and selector)
 *   apply-manifests      create or update objects
 *   clear-state          delete what fleetscope stored for the cluster under some key prefixes
 *   hook                 a capability's own function (built-in features only: a file cannot carry code)
 *   wait-for-features    done when other features of the cluster are On (requirements, before turning
 *                        on) or Off (dependants, before turning off); added from `requires`, never declared
 */
import { z } from 'zod';
import { parseLabelSelector, SelectorError } from '../kernel/label-selector.js';

export const TASK_KINDS = [
  'wait-for-uses',
  'wait-for-no-objects',
  'clear-field',
  'delete-objects',
  'apply-manifests',
  'clear-state',
  'hook',
  'wait-for-features',
] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

const API_VERSION = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/;
const PLURAL = /^[a-z][a-z0-9]*$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const selector = z
  .string()
  .max(1024)
  .superRefine((s, ctx) => {
    try {
      parseLabelSelector(s);
    } catch (err) {
      if (!(err instanceof SelectorError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
    }
  });

/** Which objects a task is about: a kind (or its plural) of an API version, optionally narrowed. */
const objectsFields = {
  apiVersion: z.string().regex(API_VERSION, 'an API version such as v1 or apps/v1'),
  /** The plural (daemonsets); or give `kind` and it is found by discovery. */
  resource: z.string().regex(PLURAL, 'a resource plural such as daemonsets').optional(),
  kind: z.string().regex(KIND, 'a kind such as DaemonSet').optional(),
  /** Absent: every namespace (or a cluster-scoped kind). */
  namespace: z.string().regex(NAME, 'a namespace name').max(63).optional(),
  name: z.string().regex(NAME, 'an object name').max(253).optional(),
  selector: selector.optional(),
};

const needsKind = (o: { resource?: string | undefined; kind?: string | undefined }) =>
  o.resource !== undefined || o.kind !== undefined;
const kindMessage = { message: 'give resource (the plural) or kind', path: ['kind'] };

const objects = z.object(objectsFields).strict().refine(needsKind, kindMessage);

/** A field as a path of keys: a list, or a dotted string when no key contains a dot. */
const fieldPath = z.union([z.array(z.string().min(1)).min(1).max(16), z.string().min(1)]).transform((f) => {
  const path = typeof f === 'string' ? f.split('.') : f;
  return path;
});

const manifest = z
  .object({
    apiVersion: z.string().regex(API_VERSION, 'an API version such as v1 or apps/v1'),
    kind: z.string().regex(KIND, 'a kind such as ConfigMap'),
    metadata: z
      .object({ name: z.string().regex(NAME, 'an object name').max(253), namespace: z.string().optional() })
      .loose(),
  })
  .loose();

export const TASK_PARAMS = {
  'wait-for-uses': z
    .object({
      waitSeconds: z
        .number()
        .int()
        .min(0)
        .max(7 * 24 * 3600)
        .optional(),
    })
    .strict(),
  'wait-for-no-objects': objects,
  'clear-field': z
    .object({ ...objectsFields, field: fieldPath, subresource: z.literal('status').optional() })
    .strict()
    .refine(needsKind, kindMessage),
  'delete-objects': objects,
  'apply-manifests': z.object({ manifests: z.array(manifest).min(1).max(50) }).strict(),
  'clear-state': z
    .object({
      prefixes: z.array(z.string().min(1).max(200)).min(1).max(20),
      /** On request (the desired value's keepState option), items get a TTL instead of being deleted. */
      keepDays: z.number().int().min(1).max(400).optional(),
    })
    .strict(),
  hook: z.object({ hook: z.string().min(1).max(100), title: z.string().max(200).optional() }).strict(),
  'wait-for-features': z
    .object({ features: z.array(z.string().min(1)).min(1), state: z.enum(['On', 'Off']) })
    .strict(),
} as const satisfies Record<TaskKind, z.ZodType>;

type ParamsOf<K extends TaskKind> = z.output<(typeof TASK_PARAMS)[K]>;
/** A task as declared and stored: its kind and its parameters side by side. */
export type TaskSpec = { [K in TaskKind]: { task: K } & ParamsOf<K> }[TaskKind];
export type TaskOf<K extends TaskKind> = Extract<TaskSpec, { task: K }>;
export type ObjectsParams = Omit<TaskOf<'wait-for-no-objects'>, 'task'>;

export interface TaskProblem {
  path: string;
  message: string;
}

/**
 * A task from untyped input (a file), or the problems with it, each naming its field under `at`
 * ("features[0].disable[2].selector"). `allowHooks` is false for files: a hook is code.
 */
export function parseTask(
  input: unknown,
  at: string,
  opts: { allowHooks: boolean },
): { task?: TaskSpec; problems: TaskProblem[] } {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { problems: [{ path: at, message: 'a task is an object: task (its kind) and its parameters' }] };
  const { task: kind, ...params } = input as Record<string, unknown>;
  if (typeof kind !== 'string' || !(TASK_KINDS as readonly string[]).includes(kind))
    return {
      problems: [
        {
          path: `${at}.task`,
          message: `unknown task kind ${JSON.stringify(kind)} (known: ${TASK_KINDS.join(', ')})`,
        },
      ],
    };
  if (kind === 'hook' && !opts.allowHooks)
    return {
      problems: [
        {
          path: `${at}.task`,
          message: 'task kind "hook" runs a capability\'s own code: only built-in features have hooks',
        },
      ],
    };
  if (kind === 'wait-for-features')
    return {
      problems: [
        {
          path: `${at}.task`,
          message:
            'task kind "wait-for-features" is added from the feature\'s requires: declare requires instead',
        },
      ],
    };
  const parsed = TASK_PARAMS[kind as TaskKind].safeParse(params);
  if (!parsed.success)
    return {
      problems: parsed.error.issues.map((i) => ({
        path: [at, ...i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))].join(''),
        message: i.message,
      })),
    };
  return { task: { task: kind, ...parsed.data } as TaskSpec, problems: [] };
}

/** Which objects, in words: "DaemonSet kube-system/fleetscope-balloon", "pods (fleetscope.io/balloon=true)". */
export function describeObjects(o: ObjectsParams): string {
  const what = o.kind ?? o.resource ?? 'objects';
  const where = o.namespace ? `${o.namespace}/` : '';
  const name = o.name ? ` ${where}${o.name}` : o.namespace ? ` in ${o.namespace}` : '';
  const sel = o.selector ? ` (${o.selector})` : '';
  return `${what}${name}${sel}`;
}

const TITLE_MAX = 200;

export function titleOf(t: TaskSpec): string {
  switch (t.task) {
    case 'wait-for-uses':
      return 'wait for uses';
    case 'wait-for-no-objects':
      return `wait for no ${describeObjects(t)}`;
    case 'clear-field':
      return `clear ${t.field.join('.')} from ${describeObjects(t)}`;
    case 'delete-objects':
      return `delete ${describeObjects(t)}`;
    case 'apply-manifests': {
      // Bounded: the title is kept in every cluster's record and its history (DynamoDB's 400 KB item).
      const all = `apply ${t.manifests.map((m) => `${m.kind} ${m.metadata.name}`).join(', ')}`;
      return all.length <= TITLE_MAX
        ? all
        : `${all.slice(0, TITLE_MAX - 24)}... (${t.manifests.length} objects)`;
    }
    case 'clear-state':
      return `clear stored state ${t.prefixes.join(', ')}`;
    case 'hook':
      return t.title ?? t.hook;
    case 'wait-for-features':
      return `wait for ${t.features.join(', ')} to be ${t.state}`;
  }
}
