import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setFeatureClock } from '../shared/features/clock.js';
import { setNodeScopeClock } from '../shared/nodescope/clock.js';
import { DEFAULTS, ENV } from '../shared/platform/config.js';
import { resetDeps } from '../shared/platform/deps.js';
import { LocalBus } from './bus.js';
import { ensureTables, startLocalDynamo } from './dynamo.js';
import { LocalInvoker } from './invoker.js';
import { REPO_ROOT } from './root.js';
import { LocalScheduler, type ScheduleClock } from './scheduler.js';
import { connectState } from './state/connect.js';

export { REPO_ROOT };

export interface LocalRuntimeOptions {
  /**
   * Persist DynamoDB state here (LevelDB), served by a process every fleetscope process on this
   * directory shares (local/state/); in memory, in this process, when absent.
   */
  stateDir?: string;
  /** Delay before Lambda-style retries, in ms (tests shorten it). */
  retryDelayMs?: number;
  /** Concurrent invocations per function (reserved concurrency); default one (see LocalInvoker). */
  concurrency?: (functionId: string) => number;
  /**
   * The clock the schedules run on, and with them every wait, lease and backoff of the handlers in this
   * process (features' waits for uses, node scope's and balloons' resize backoffs and cool-downs): the
   * simulated clusters' clock in the demo, so `--speedup` compresses them all alike. Default: the wall.
   */
  clock?: ScheduleClock;
}

export interface LocalRuntime {
  /** Where DynamoDB is served: dynalite's loopback endpoint, or AWS / LocalStack. */
  dynamoEndpoint: string | 'aws';
  table: string;
  idempotencyTable: string;
  db: DynamoDBDocumentClient;
  bus: LocalBus;
  invoker: LocalInvoker;
  scheduler: LocalScheduler;
  /** The schedule clock (see LocalRuntimeOptions.clock). */
  clock: ScheduleClock;
  stop(): Promise<void>;
}

const ENV_TOUCHED = [
  'AWS_REGION',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_EVENTBRIDGE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  ENV.table,
  ENV.idempotencyTable,
  ENV.bus,
  ENV.reportDir,
  'POWERTOOLS_SERVICE_NAME',
  'FLEETSCOPE_OWNER_ID',
];

/**
 * DynamoDB comes from AWS (or LocalStack via AWS_ENDPOINT_URL) when the user names a table in
 * FLEETSCOPE_TABLE; otherwise from an embedded dynalite. The bus and scheduler are always in-process,
 * because a real bus would route events to deployed Lambdas rather than to these handlers.
 */
function wantsRemoteDynamo(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env[ENV.table]);
}

/** The tables the handlers use: the user's (FLEETSCOPE_TABLE...) or the stack's default names. */
interface TableNames {
  table: string;
  idempotencyTable: string;
}

/** Where DynamoDB is served, and how to let go of it on stop. */
interface DynamoConnection {
  endpoint: LocalRuntime['dynamoEndpoint'];
  release(): Promise<void>;
}

/**
 * The embedded control plane: the handlers Lambda runs, wired to local stand-ins through the SDK's own
 * endpoint settings (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_EVENTBRIDGE), so no handler knows.
 */
export async function startLocalRuntime(opts: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const env = process.env;
  // Everything set here is put back on stop, so a later runtime in the same process starts clean.
  const restoreEnv = saveEnv(env);
  env.AWS_REGION ??= 'us-east-1';
  const tables: TableNames = {
    table: env[ENV.table] ?? DEFAULTS.table,
    idempotencyTable: env[ENV.idempotencyTable] ?? DEFAULTS.idempotencyTable,
  };
  const dynamo = wantsRemoteDynamo(env)
    ? await remoteDynamo(env, tables)
    : await localDynamo(env, tables, opts);
  env[ENV.table] = tables.table;
  env[ENV.idempotencyTable] = tables.idempotencyTable;
  env[ENV.bus] ??= DEFAULTS.bus;
  env.POWERTOOLS_SERVICE_NAME ??= DEFAULTS.serviceName;
  // The control plane as clusters' owner leases name it: one per state directory (two state directories
  // are two control planes, each with its own registry), unless the user names it.
  env.FLEETSCOPE_OWNER_ID ||= opts.stateDir
    ? `local:${resolve(opts.stateDir)}`
    : `local:memory:${process.pid}`;
  const throwawayReports = placeReports(env, opts.stateDir);

  const invoker = new LocalInvoker(REPO_ROOT, opts.retryDelayMs, opts.concurrency);
  const bus = await LocalBus.start({ invoker, busName: env[ENV.bus] ?? DEFAULTS.bus });
  env.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.endpoint;
  resetDeps();

  const client = new DynamoDBClient({});
  const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const clock = opts.clock ?? Date.now;
  // Only a runtime given a clock sets the handlers' (a test may have set them itself).
  if (opts.clock) useClock(opts.clock);
  const scheduler = new LocalScheduler(invoker, bus, clock);
  return {
    dynamoEndpoint: dynamo.endpoint,
    ...tables,
    db,
    bus,
    invoker,
    scheduler,
    clock,
    async stop() {
      scheduler.stop();
      if (opts.clock) useClock(undefined);
      await bus.stop();
      resetDeps();
      client.destroy();
      await dynamo.release();
      if (throwawayReports) rmSync(throwawayReports, { recursive: true, force: true });
      restoreEnv();
    },
  };
}

/** Points the handlers' clocks at the schedule clock (undefined: back to the wall clock). */
function useClock(clock: ScheduleClock | undefined): void {
  setFeatureClock(clock);
  setNodeScopeClock(clock);
}

/** The values of ENV_TOUCHED now, and a function that puts them back. */
function saveEnv(env: NodeJS.ProcessEnv): () => void {
  const saved = Object.fromEntries(ENV_TOUCHED.map((k) => [k, env[k]]));
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
  };
}

/** dynalite and emulators accept any credentials; real ones are not needed (nor sent anywhere else). */
function useAnyCredentials(env: NodeJS.ProcessEnv): void {
  if (!env.AWS_ACCESS_KEY_ID && !env.AWS_PROFILE) {
    env.AWS_ACCESS_KEY_ID = 'local';
    env.AWS_SECRET_ACCESS_KEY = 'local';
  }
}

/** The state directory's shared server, or a dynalite of this process's own (in memory). */
async function localDynamo(
  env: NodeJS.ProcessEnv,
  tables: TableNames,
  opts: LocalRuntimeOptions,
): Promise<DynamoConnection> {
  let connection: DynamoConnection;
  if (opts.stateDir) {
    // The state server created the tables before it recorded itself (local/state/server.ts).
    const shared = await connectState(opts.stateDir);
    connection = { endpoint: shared.endpoint, release: async () => shared.release() };
  } else {
    const dynamo = await startLocalDynamo();
    await ensureTables(dynamo.endpoint, tables);
    connection = { endpoint: dynamo.endpoint, release: () => dynamo.stop() };
  }
  env.AWS_ENDPOINT_URL_DYNAMODB = connection.endpoint;
  useAnyCredentials(env);
  return connection;
}

/** AWS, or an emulator the user names in AWS_ENDPOINT_URL. */
async function remoteDynamo(env: NodeJS.ProcessEnv, tables: TableNames): Promise<DynamoConnection> {
  if (env.AWS_ENDPOINT_URL) {
    // LocalStack (or another emulator) without a deployed stack: create the tables from the same
    // definition the stack deploys. Never done against real AWS, where the stack owns them.
    useAnyCredentials(env);
    await ensureTables(env.AWS_ENDPOINT_URL, tables);
  }
  return { endpoint: 'aws', release: async () => {} };
}

/**
 * The scheduled fleet report goes to the state directory (S3 in the stack); a throwaway run's to a
 * temporary directory, returned to be removed on stop.
 */
function placeReports(env: NodeJS.ProcessEnv, stateDir: string | undefined): string | undefined {
  const throwaway =
    !env[ENV.reportDir] && !stateDir ? mkdtempSync(join(tmpdir(), 'fleetscope-reports-')) : undefined;
  env[ENV.reportDir] ??= stateDir ? join(stateDir, 'reports') : throwaway;
  return throwaway;
}
