/**
 * Features as people read them (CLI, JSON/YAML): one row per (cluster, feature) and the detail of one,
 * with the task list and what each task waits for, the uses, and what dangles.
 */

import { textTable } from '../kernel/text-table.js';
import { type FeatureRecord, refKey, type TaskRecord, type Transition, targetOf, type Use } from './model.js';
import type { TransitionPlan } from './plan.js';

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export interface FeatureJson {
  cluster: string;
  feature: string;
  state: FeatureRecord['state'];
  desired: 'on' | 'off' | 'default';
  default: 'on' | 'off';
  target: 'on' | 'off';
  desiredBy?: string;
  tasks: ReturnType<typeof taskJson>[];
  transition?: ReturnType<typeof transitionJson>;
  uses: { component: string; value: string; at: string; source: string }[];
  /** What an Off feature still leaves (absent when not checked). */
  dangling?: string[];
  /** With requirements or dependants: the order features turn on, and off (this one last in each). */
  order?: { on: string[]; off: string[] };
  version: number;
  updatedAt: string;
}

export function taskJson(t: TaskRecord) {
  return {
    title: t.title,
    task: t.spec.task,
    attempts: t.attempts,
    writes: t.writes,
    ...(t.waitingFor ? { waitingFor: t.waitingFor } : {}),
    ...(t.lastError ? { lastError: t.lastError } : {}),
    ...(t.notBefore ? { notBefore: iso(t.notBefore) } : {}),
    ...(t.claim ? { inProgress: { by: t.claim.by, until: iso(t.claim.until) } } : {}),
    ...(t.stuck ? { stuck: { since: iso(t.stuck.at)!, reason: t.stuck.reason } } : {}),
  };
}

export function transitionJson(t: Transition) {
  return {
    to: t.to,
    reason: t.reason,
    startedAt: iso(t.startedAt),
    ...(t.endedAt ? { endedAt: iso(t.endedAt), outcome: t.outcome } : {}),
    done: t.done.map((d) => ({
      title: d.title,
      task: d.task,
      attempts: d.attempts,
      writes: d.writes,
      doneAt: iso(d.doneAt),
      ...(d.skipped ? { skipped: true } : {}),
    })),
    ...(t.actions?.length ? { actions: t.actions.map((a) => ({ ...a, at: iso(a.at)! })) } : {}),
  };
}

export function featureJson(r: FeatureRecord, uses: readonly Use[], dangling?: string[]): FeatureJson {
  return {
    cluster: r.cluster,
    feature: refKey(r),
    state: r.state,
    desired: r.desired ?? 'default',
    default: r.default,
    target: targetOf(r),
    ...(r.desiredBy ? { desiredBy: r.desiredBy } : {}),
    tasks: r.tasks.map(taskJson),
    ...(r.transition ? { transition: transitionJson(r.transition) } : {}),
    uses: uses.map((u) => ({ component: u.component, value: u.value, at: iso(u.at)!, source: u.source })),
    ...(dangling ? { dangling } : {}),
    version: r.version,
    updatedAt: iso(r.updatedAt)!,
  };
}

/** What the first task is waiting for, or why it fails, in one cell. */
export function waitingCell(f: FeatureJson): string {
  const t = f.tasks[0];
  if (!t) return '';
  if (t.stuck) return `STUCK since ${t.stuck.since}: ${t.stuck.reason}`;
  if (t.lastError) return `failing (${t.attempts}x): ${t.lastError}`;
  return t.waitingFor ?? (t.inProgress ? 'in progress' : 'next');
}

export function danglingCell(f: FeatureJson): string {
  if (f.state !== 'Off') return '';
  if (!f.dangling) return '?';
  return f.dangling.length ? `DANGLING: ${f.dangling.join('; ')}` : 'clean';
}

export function listTable(rows: FeatureJson[], wide: boolean): string[] {
  const head = [
    'CLUSTER',
    'FEATURE',
    'STATE',
    'DESIRED',
    'DEFAULT',
    'TASKS',
    'TASK',
    'WAITING FOR',
    'DANGLING',
  ];
  if (wide) head.push('USES', 'DESIRED BY', 'UPDATED');
  const cell = (s: string, n: number) => (wide ? s : cut(s, n));
  return textTable([
    head,
    ...rows.map((f) => {
      const cells = [
        f.cluster,
        f.feature,
        f.tasks[0]?.stuck ? `${f.state} (stuck)` : f.state,
        f.desired,
        f.default,
        String(f.tasks.length),
        cell(f.tasks[0]?.title ?? '', 50),
        cell(waitingCell(f), 70),
        cell(danglingCell(f), 60),
      ];
      if (wide)
        cells.push(f.uses.map((u) => `${u.component}=${u.value}`).join(', '), f.desiredBy ?? '', f.updatedAt);
      return cells;
    }),
  ]);
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 3)}...` : s);

export function detailLines(f: FeatureJson): string[] {
  const lines = [
    `cluster:  ${f.cluster}`,
    `feature:  ${f.feature}`,
    `state:    ${f.state}${f.transition ? ` (since ${f.transition.startedAt}: ${f.transition.reason})` : ''}`,
    `desired:  ${f.desired}${f.desiredBy ? ` (set by ${f.desiredBy})` : ''}   default: ${f.default}   target: ${f.target}`,
  ];
  if (f.order) lines.push(`order on:  ${f.order.on.join(' -> ')}`, `order off: ${f.order.off.join(' -> ')}`);
  if (f.tasks.length) {
    lines.push('tasks:');
    f.tasks.forEach((t, i) => {
      lines.push(`  ${i + 1}. ${t.title} [${t.task}] attempts ${t.attempts}, writes ${t.writes}`);
      if (t.inProgress) lines.push(`     in progress (${t.inProgress.by}, until ${t.inProgress.until})`);
      if (t.stuck)
        lines.push(
          `     STUCK since ${t.stuck.since}: ${t.stuck.reason} (features retry|skip|abandon --reason "...")`,
        );
      if (t.waitingFor) lines.push(`     waiting for: ${t.waitingFor}`);
      if (t.lastError)
        lines.push(`     last error: ${t.lastError}${t.notBefore ? ` (retry after ${t.notBefore})` : ''}`);
    });
  }
  if (f.transition?.done.length) {
    lines.push('done in this transition:');
    for (const d of f.transition.done)
      lines.push(
        `  - ${d.title} (${d.skipped ? 'SKIPPED' : `${d.writes} write(s), ${d.attempts} failed attempt(s)`})`,
      );
  }
  for (const a of f.transition?.actions ?? [])
    lines.push(`operator: ${a.verb} "${a.task}" by ${a.by} at ${a.at}: ${a.reason}`);
  lines.push(f.uses.length ? 'uses:' : 'uses: none reported');
  for (const u of f.uses) lines.push(`  ${u.component}: ${u.value} at ${u.at} (${u.source})`);
  if (f.state === 'Off' && f.dangling)
    lines.push(
      f.dangling.length ? `dangling:\n${f.dangling.map((d) => `  - ${d}`).join('\n')}` : 'dangling: nothing',
    );
  return lines;
}

export function historyLines(r: FeatureRecord): string[] {
  const all = [...r.history, ...(r.transition ? [r.transition] : [])];
  if (all.length === 0) return [`${refKey(r)} in ${r.cluster}: no transition yet (${r.state})`];
  return textTable([
    ['STARTED', 'TO', 'OUTCOME', 'ENDED', 'TASKS DONE', 'WRITES', 'REASON', 'OPERATORS'],
    ...all.map((t) => [
      iso(t.startedAt)!,
      t.to,
      t.outcome ?? 'in progress',
      iso(t.endedAt) ?? '',
      String(t.done.length),
      String(t.done.reduce((n, d) => n + d.writes, 0)),
      t.reason,
      (t.actions ?? [])
        .map((a) => `${a.verb} "${a.task}" by ${a.by} at ${iso(a.at)}: ${a.reason}`)
        .join('; '),
    ]),
  ]);
}

/** `features plan`: one row per object touched, in the order the tasks would touch them. */
export function planLines(p: TransitionPlan): string[] {
  const head = `${p.feature} in ${p.cluster}: ${p.state} -> ${p.to} (dry run, nothing written)`;
  if (p.note) return [head, p.note];
  return [
    head,
    ...textTable([
      ['ACTION', 'OBJECT', 'DETAIL', 'TASK'],
      ...p.steps.map((s) => [
        s.refused ? `${s.action} REFUSED` : s.action,
        s.object,
        s.refused ? `${s.detail ? `${s.detail}; ` : ''}the server refused: ${s.refused}` : (s.detail ?? ''),
        s.task,
      ]),
    ]),
  ];
}
