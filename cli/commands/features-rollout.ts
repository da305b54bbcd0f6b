/** `fleetscope features rollout ...`: a feature across the fleet in waves (shared/features/rollout.ts). */
import { loadCatalog } from '../../shared/features/catalog.js';
import type { Value } from '../../shared/features/model.js';
import {
  clustersOfWave,
  parseDuration,
  type Rollout,
  RolloutInputError,
} from '../../shared/features/rollout.js';
import { clusterHealth } from '../../shared/features/rollout-health.js';
import {
  approveWave,
  type RolloutPorts,
  setRolloutStatus,
  startRollout,
} from '../../shared/features/rollout-runner.js';
import { DynamoRolloutStore } from '../../shared/features/rollout-store-dynamo.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { SelectorError } from '../../shared/kernel/label-selector.js';
import { textTable } from '../../shared/kernel/text-table.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { runSubcommand, UsageError } from '../command.js';
import { type CliContext, withContext } from '../context.js';
import { outputFormat, print } from '../output.js';
import { featureOf } from './feature-flag.js';
import type { Flags } from './features-flags.js';

async function ports(ctx: CliContext): Promise<RolloutPorts> {
  const store = new DynamoFeatureStore(ctx.db, ctx.table);
  return {
    rollouts: new DynamoRolloutStore(ctx.db, ctx.table),
    store,
    catalog: await loadCatalog(store),
    registry: ctx.registry,
    publish: (e) => ctx.publisher.publish(e),
    health: clusterHealth({
      getStatus: (c) => ctx.registry.getStatus(c),
      getCluster: (c) => new DynamoNodeScopeStore(ctx.db, ctx.table).getCluster(c),
    }),
    now: Date.now,
  };
}

/** A rollout input error as a usage error (it names the flag). */
async function asUsage<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof RolloutInputError || err instanceof SelectorError) throw new UsageError(err.message);
    throw err;
  }
}

export function rolloutCommand(values: Flags, positionals: string[]): Promise<number> {
  if (positionals.length === 0) return start(values);
  return runSubcommand(positionals, {
    status: () => status(values),
    halt: () => change(values, 'halted'),
    approve: () => approve(values),
    resume: () => change(values, 'running'),
  });
}

async function start(values: Flags): Promise<number> {
  if (values.to !== 'on' && values.to !== 'off')
    throw new UsageError(`--to: give on or off${values.to ? `, not "${values.to}"` : ''}`);
  if (!values.waves) throw new UsageError('rollout needs --waves, such as 1,10%,50%,100%');
  const pauseMs = await asUsage(async () => parseDuration(values.pause ?? '10m', '--pause'));
  const stuckAfterMs = values['stuck-after']
    ? await asUsage(async () => parseDuration(values['stuck-after']!, '--stuck-after'))
    : undefined;
  const failAfter = values['fail-after'] === undefined ? undefined : Number(values['fail-after']);
  if (failAfter !== undefined && !(Number.isInteger(failAfter) && failAfter >= 1))
    throw new UsageError(
      `--fail-after: a number of failed attempts (at least 1), not "${values['fail-after']}"`,
    );
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const p = await ports(ctx);
    const spec = featureOf(p.catalog, values.feature, 'rollout');
    const r = await asUsage(() =>
      startRollout(p, {
        feature: spec,
        to: values.to as Value,
        waves: values.waves!,
        pauseMs,
        ...(values.selector ? { selector: values.selector } : {}),
        ...(stuckAfterMs !== undefined ? { stuckAfterMs } : {}),
        ...(failAfter !== undefined ? { failAfterAttempts: failAfter } : {}),
        ...(values['no-rollback'] ? { rollback: false } : {}),
        ...(values.approval ? { approval: true } : {}),
        by: 'operator',
      }),
    );
    await ctx.runtime?.bus.drain(); // local: the first wave has started
    print(format, rolloutJson(r), () => [
      `rollout ${r.id}: ${spec.name} ${r.to} over ${r.clusters.length} cluster(s)`,
      ...waveLines(r).map((line) => `  ${line}`),
    ]);
    return 0;
  });
}

function waveLines(r: Rollout): string[] {
  return r.bounds.map(
    (_, w) => `wave ${w + 1}${w === 0 ? ' (canary)' : ''}: ${clustersOfWave(r, w).join(', ')}`,
  );
}

function rolloutJson(r: Rollout) {
  return {
    id: r.id,
    feature: `${r.namespace}/${r.feature}`,
    to: r.to,
    status: r.status,
    ...(r.reason ? { reason: r.reason } : {}),
    rollback: r.rollback !== false,
    ...(r.approval ? { approval: true, approvedWave: (r.approvedWave ?? -1) + 2 } : {}),
    wave: r.wave + 1,
    waves: r.bounds.map((_, w) => clustersOfWave(r, w)),
    pause: `${Math.round(r.pauseMs / 1000)}s`,
    ...(r.waveStartedAt ? { waveStartedAt: new Date(r.waveStartedAt).toISOString() } : {}),
    ...(r.waveReachedAt ? { waveReachedAt: new Date(r.waveReachedAt).toISOString() } : {}),
    log: r.log.map((l) => `${new Date(l.at).toISOString()} ${l.message}`),
  };
}

async function status(values: Flags): Promise<number> {
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const store = new DynamoRolloutStore(ctx.db, ctx.table);
    const all = values.id
      ? [await store.get(values.id)].filter((r): r is Rollout => !!r)
      : await store.list();
    if (values.id && all.length === 0) throw new Error(`no rollout "${values.id}"`);
    print(format, { rollouts: all.map(rolloutJson) }, (wide) =>
      all.length === 0
        ? ['no rollouts']
        : values.id
          ? [
              `${all[0]!.id}: ${all[0]!.status}${all[0]!.reason ? ` (${all[0]!.reason})` : ''}, wave ${all[0]!.wave + 1} of ${all[0]!.bounds.length}`,
              ...waveLines(all[0]!),
              'log:',
              ...rolloutJson(all[0]!).log.map((l) => `  ${l}`),
            ]
          : rolloutTable(all, wide),
    );
    return 0;
  });
}

function rolloutTable(all: Rollout[], wide: boolean): string[] {
  const head = ['ID', 'FEATURE', 'TO', 'STATUS', 'WAVE', 'CLUSTERS'];
  if (wide) head.push('PAUSE', 'WAVE STARTED', 'WAVE REACHED');
  return textTable([
    [...head, 'REASON'],
    ...all.map((r) => {
      const j = rolloutJson(r);
      return [
        r.id,
        j.feature,
        r.to,
        r.status,
        `${r.wave + 1}/${r.bounds.length}`,
        String(r.clusters.length),
        ...(wide ? [j.pause, j.waveStartedAt ?? '', j.waveReachedAt ?? ''] : []),
        r.reason ?? '',
      ];
    }),
  ]);
}

async function approve(values: Flags): Promise<number> {
  if (!values.id) throw new UsageError('approve needs --id');
  return withContext(values, async (ctx) => {
    const wave = values.wave === undefined ? undefined : Number(values.wave);
    const r = await asUsage(async () => approveWave(await ports(ctx), values.id!, 'operator', wave));
    await ctx.runtime?.bus.drain();
    console.log(`rollout ${r.id}: wave ${r.wave + 2} of ${r.bounds.length} approved`);
    return 0;
  });
}

async function change(values: Flags, to: 'halted' | 'running'): Promise<number> {
  if (!values.id) throw new UsageError(`${to === 'halted' ? 'halt' : 'resume'} needs --id`);
  return withContext(values, async (ctx) => {
    const r = await asUsage(async () => setRolloutStatus(await ports(ctx), values.id!, to, 'operator'));
    await ctx.runtime?.bus.drain();
    console.log(
      `rollout ${r.id}: ${r.status}${r.reason ? ` (${r.reason})` : ''}, wave ${r.wave + 1} of ${r.bounds.length}`,
    );
    return 0;
  });
}
