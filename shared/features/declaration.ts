/**
 * Third-party features declared in a file (`fleetscope features register --file F`), made of the
 * built-in tasks only (a file carries no code, so no hooks). A bad file is refused whole, with every
 * problem named by its field ("features[0].disable[2].selector: ..."), and nothing is written. What a
 * declared task may not do even when well-formed (delete every Pod, touch kube-system, bind
 * cluster-admin, clear another feature's state) is ./harmless.ts.
 *
 *   features:
 *     - namespace: widgets            # the third party's own namespace (fleetscope-system is fleetscope's)
 *       name: widgets
 *       description: Widget stamping by the widget agent
 *       default: off
 *       components: [widget-agent]     # in-cluster components that report uses in the Feature status
 *       usesWaitSeconds: 120
 *       taskDeadlineMinutes: 60        # a task not done by then shows the transition stuck (default 60)
 *       enable:
 *         - task: apply-manifests
 *           manifests: [...]
 *       disable:
 *         - task: wait-for-uses
 *         - task: wait-for-no-objects  # the widgets people made: never deleted by fleetscope
 *           apiVersion: example.com/v1
 *           kind: Widget
 *         - task: delete-objects
 *           apiVersion: v1
 *           kind: ConfigMap
 *           namespace: widgets
 *           name: widget-agent-config
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { rfc1123LabelProblem } from '../kernel/names.js';
import { formatPath } from '../platform/validation.js';
import { GUARDED_KINDS, harmOf, isSystemNamespace, OWNER_VALUE_MAX, ownerValue } from './harmless.js';
import { FLEETSCOPE_NAMESPACE, parseRef, refKey } from './model.js';
import { DEFAULT_USES_WAIT_SECONDS, type FeatureSpec } from './spec.js';
import { parseTask, type TaskProblem, type TaskSpec } from './task-kinds.js';

const VERSION = /^v?\d+\.\d+(\.\d+)?$/;
const label = (what: string) =>
  z.string().superRefine((v, ctx) => {
    const p = rfc1123LabelProblem(v, what);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });

const declSchema = z
  .object({
    namespace: label('namespace')
      .refine((n) => n !== FLEETSCOPE_NAMESPACE, {
        message: `${FLEETSCOPE_NAMESPACE} holds fleetscope's own features; use your own namespace`,
      })
      .refine((n) => !isSystemNamespace(n), {
        message: "kube-* namespaces are the cluster's own; use your own namespace",
      })
      .refine((n) => n !== 'default', {
        message: "default is everyone's namespace, not a feature's own; use your own namespace",
      }),
    name: label('feature name'),
    description: z.string().max(1024).default(''),
    default: z.enum(['on', 'off']).default('off'),
    components: z
      .array(z.string().regex(/^[a-z0-9]([-a-z0-9./]*[a-z0-9])?$/, 'a component name'))
      .max(50)
      .default([]),
    usesWaitSeconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .default(DEFAULT_USES_WAIT_SECONDS),
    /** How long one task may take before the transition is shown stuck (absent: 60 minutes). */
    taskDeadlineMinutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60)
      .optional(),
    kubernetes: z
      .object({
        min: z.string().regex(VERSION, 'a version such as 1.33').optional(),
        max: z.string().regex(VERSION, 'a version such as 1.35').optional(),
        why: z.string().min(1).max(512),
      })
      .strict()
      .optional(),
    since: z.string().regex(VERSION, 'a version such as 0.1.0').default('0.1.0'),
    /** Features that must be On first: "balloons" (fleetscope's own) or "namespace/name". */
    requires: z
      .array(
        z
          .string()
          .regex(
            /^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
            'a feature: NAME or NAMESPACE/NAME',
          ),
      )
      .max(20)
      .default([]),
    enable: z.array(z.unknown()).max(50).default([]),
    disable: z.array(z.unknown()).max(50).default([]),
  })
  .strict();

export class DeclarationError extends Error {
  override name = 'DeclarationError';
  constructor(
    readonly file: string,
    readonly problems: TaskProblem[],
  ) {
    super(`${file}: ${problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`);
  }
}

export interface RegisterOptions {
  /**
   * Kinds the operator allows the file's features to write (admission webhooks, RBAC, cluster-scoped
   * kinds: ./harmless.ts GUARDED_KINDS); every other guarded kind is refused.
   */
  allowKinds?: readonly string[];
}

/** The features a file declares; throws DeclarationError naming every bad field. */
export function parseDeclarations(text: string, file: string, opts: RegisterOptions = {}): FeatureSpec[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new DeclarationError(file, [{ path: '', message: `not YAML or JSON: ${(err as Error).message}` }]);
  }
  const list = (doc as { features?: unknown })?.features;
  if (!Array.isArray(list) || list.length === 0)
    throw new DeclarationError(file, [{ path: 'features', message: 'a list of at least one feature' }]);
  const problems: TaskProblem[] = [];
  const allowKinds = [...new Set(opts.allowKinds ?? [])].sort();
  for (const k of allowKinds)
    if (!(k in GUARDED_KINDS) && !/^[A-Z][A-Za-z0-9]*$/.test(k))
      problems.push({ path: '--allow-kind', message: `"${k}" is not a kind such as ClusterRole` });
  const specs = list.map((item, i) => declared(item, `features[${i}]`, file, problems, allowKinds));
  const seen = new Set<string>();
  specs.forEach((s, i) => {
    if (!s) return;
    const key = `${s.namespace}/${s.name}`;
    if (seen.has(key)) problems.push({ path: `features[${i}].name`, message: `${key} is declared twice` });
    seen.add(key);
  });
  specs.forEach((s, i) => {
    const bytes = s ? Buffer.byteLength(JSON.stringify(s)) : 0;
    if (bytes > DECLARATION_MAX_BYTES)
      problems.push({
        path: `features[${i}]`,
        message: `${Math.ceil(bytes / 1024)} KiB declared: at most ${DECLARATION_MAX_BYTES / 1024} KiB (its tasks are copied into every cluster's record, which DynamoDB limits to 400 KB)`,
      });
  });
  if (list.length > MAX_FEATURES_PER_FILE)
    problems.push({
      path: 'features',
      message: `${list.length} features: a file registers at most ${MAX_FEATURES_PER_FILE}`,
    });
  if (problems.length) throw new DeclarationError(file, problems);
  return specs as FeatureSpec[];
}

/**
 * A declaration's size, as stored: its tasks are copied into each cluster's record with the history,
 * under DynamoDB's 400 KB item limit, so one oversize file cannot stop every pass.
 */
export const DECLARATION_MAX_BYTES = 64 * 1024;
/** A file's features are registered together (all or none): a bound on what one file may hold. */
export const MAX_FEATURES_PER_FILE = 25;

/**
 * The file's `requires` against every feature there will be (the catalog and the file): each names a
 * known feature, and no chain of requirements comes back to where it started. Throws naming the field.
 */
export function checkRequires(
  declared: readonly FeatureSpec[],
  known: readonly FeatureSpec[],
  file: string,
): void {
  const all = new Map<string, FeatureSpec>();
  for (const s of [...known, ...declared]) all.set(refKey(s), s);
  const problems: TaskProblem[] = [];
  declared.forEach((s, i) => {
    (s.requires ?? []).forEach((r, j) => {
      const at = `features[${i}].requires[${j}]`;
      if (!all.has(refKey(r)))
        problems.push({
          path: at,
          message: `unknown feature "${refKey(r)}" (known: ${[...all.keys()].sort().join(', ')})`,
        });
      else {
        const loop = pathBack(refKey(r), refKey(s), all);
        if (loop) problems.push({ path: at, message: `a cycle: ${[refKey(s), ...loop].join(' -> ')}` });
      }
    });
  });
  if (problems.length) throw new DeclarationError(file, problems);
}

/** The chain of requirements from `from` that reaches `to`, if one does. */
function pathBack(
  from: string,
  to: string,
  all: Map<string, FeatureSpec>,
  seen = new Set<string>(),
): string[] | undefined {
  if (from === to) return [from];
  if (seen.has(from)) return undefined;
  seen.add(from);
  for (const r of all.get(from)?.requires ?? []) {
    const rest = pathBack(refKey(r), to, all, seen);
    if (rest) return [from, ...rest];
  }
  return undefined;
}

function declared(
  item: unknown,
  at: string,
  file: string,
  problems: TaskProblem[],
  allowKinds: readonly string[],
): FeatureSpec | undefined {
  const parsed = declSchema.safeParse(item);
  if (!parsed.success)
    for (const i of parsed.error.issues)
      problems.push({ path: `${at}.${formatPath(i.path)}`, message: i.message });
  // The tasks are checked even when other fields are bad: one run names every problem of the file.
  const raw = (item ?? {}) as { enable?: unknown; disable?: unknown; namespace?: unknown; name?: unknown };
  const ref = { namespace: String(raw.namespace), name: String(raw.name) };
  const tasks = (list: unknown, which: string): TaskSpec[] =>
    (Array.isArray(list) ? list : []).flatMap((t, j) => {
      const r = parseTask(t, `${at}.${which}[${j}]`, { allowHooks: false });
      problems.push(
        ...r.problems,
        ...(r.task ? harmOf(ref, r.task, `${at}.${which}[${j}]`, allowKinds) : []),
      );
      return r.task ? [r.task] : [];
    });
  const enable = tasks(raw.enable, 'enable');
  const disable = tasks(raw.disable, 'disable');
  if (!parsed.success) return undefined;
  if (ownerValue(ref).length > OWNER_VALUE_MAX)
    problems.push({
      path: `${at}.name`,
      message: `namespace and name together are ${ownerValue(ref).length} characters: the ownership label "${ownerValue(ref)}" holds at most ${OWNER_VALUE_MAX}`,
    });
  const { enable: _e, disable: _d, kubernetes, requires, ...rest } = parsed.data;
  return {
    ...rest,
    ...(allowKinds.length ? { allowKinds: [...allowKinds] } : {}),
    ...(kubernetes ? { kubernetes } : {}),
    ...(requires.length ? { requires: requires.map(parseRef) } : {}),
    enable,
    disable,
    origin: { file },
  };
}

/** A declaration as stored: the spec without code (a declared feature has none). */
export type StoredDeclaration = Omit<FeatureSpec, 'hooks' | 'leftovers'> & { registeredAt: number };
