import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LocalRuntime } from '../local/runtime.js';
import type { Registry } from '../shared/fleet/registry.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { ENV } from '../shared/platform/config.js';
import { deps, resetDeps } from '../shared/platform/deps.js';
import type { EventPublisher } from '../shared/platform/publisher.js';
import { didYouMean, UsageError } from './command.js';
import { FORMATS_TEXT } from './output.js';

/** Where a CLI command acts: the local state directory (default) or a deployed stack (`--aws`). */
export interface CliContext {
  mode: 'local' | 'aws';
  db: DynamoDBDocumentClient;
  table: string;
  registry: Registry;
  publisher: EventPublisher;
  /** The local runtime when mode is local: its bus delivers the command's events to the handlers. */
  runtime?: LocalRuntime;
  /** The deployed stack's verify function (aws mode; absent on stacks that predate it). */
  verifyFunction?: string;
  /** Waits for the work the command's events started (local mode), then releases everything. */
  close(): Promise<void>;
}

export const targetOptions = {
  aws: { type: 'boolean' },
  stack: { type: 'string' },
  region: { type: 'string' },
  'state-dir': { type: 'string' },
} as const;

export interface TargetFlags {
  aws?: boolean;
  stack?: string;
  region?: string;
  'state-dir'?: string;
}

export function stateDirOf(flags: TargetFlags): string {
  const dir = resolve(flags['state-dir'] ?? process.env.FLEETSCOPE_STATE_DIR ?? '.fleetscope');
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new UsageError(`state directory ${dir} is a file; give --state-dir a directory`);
  return dir;
}

/** Parses a command's flags, turning node:util's errors into usage errors. */
export function parseFlags<O extends ParseArgsOptionsConfig>(args: string[], options: O) {
  try {
    return parseArgs({
      args: negativeValuesJoined(args, options),
      options,
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError(flagProblem(err instanceof Error ? err.message : String(err), options));
  }
}

/** node:util's parse error in fleetscope's words: the flag, what is wrong, what would be right. */
function flagProblem(message: string, options: ParseArgsOptionsConfig): string {
  // Its text for an unknown flag carries a hint about positionals that does not apply here.
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) {
    const known = Object.keys(options).map((o) => `--${o}`);
    return `unknown option ${unknown[1]}${didYouMean(unknown[1]!, known)}`;
  }
  // A flag at the end, or followed by another flag: its value was forgotten.
  const missing =
    /^Option '(?:-\w, )?--([\w-]+) <value>' argument missing/.exec(message)?.[1] ??
    longName(/^Option '(-\w|--[\w-]+)' argument is ambiguous/.exec(message)?.[1], options);
  if (missing)
    return missing === 'output' ? `-o needs a value: ${FORMATS_TEXT}` : `--${missing} needs a value`;
  const boolean = /^Option '(?:-\w, )?--([\w-]+)' does not take an argument/.exec(message);
  if (boolean) return `--${boolean[1]} takes no value`;
  return message;
}

function longName(flag: string | undefined, options: ParseArgsOptionsConfig): string | undefined {
  if (!flag) return undefined;
  if (flag.startsWith('--')) return flag.slice(2);
  return Object.entries(options).find(([, o]) => o.short === flag.slice(1))?.[0];
}

/**
 * `--cpu -2` as `--cpu=-2`, `--name -a.example.com` as `--name=-a.example.com`: node:util reads a value
 * starting with "-" as another flag and calls it ambiguous; after a flag that takes a value, anything
 * that is not one of the command's flags is that flag's value (and its own check then says what is wrong
 * with it).
 */
function negativeValuesJoined(args: string[], options: ParseArgsOptionsConfig): string[] {
  const out: string[] = [];
  const isFlag = (a: string) =>
    a === '--' ||
    (a.startsWith('--')
      ? Object.hasOwn(options, a.slice(2).split('=')[0]!) || a === '--help'
      : a === '-h' || Object.values(options).some((o) => o.short === a.slice(1, 2)));
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith('--')
      ? arg.slice(2)
      : Object.entries(options).find(([, o]) => arg === `-${o.short}`)?.[0];
    const takesValue = name !== undefined && options[name]?.type === 'string';
    if (takesValue && next?.startsWith('-') && !isFlag(next)) {
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

export async function openContext(flags: TargetFlags): Promise<CliContext> {
  if (flags.aws) return openAws(flags);
  process.env[ENV.logLevel] ??= 'ERROR';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const { startLocalRuntime } = await import('../local/runtime.js');
  const runtime = await startLocalRuntime({ stateDir: stateDirOf(flags) });
  const { db, publisher } = deps();
  return {
    mode: 'local',
    db,
    table: runtime.table,
    registry: new DynamoRegistry(db, runtime.table),
    publisher,
    runtime,
    close: async () => {
      await runtime.bus.drain();
      await runtime.stop();
    },
  };
}

/** Reads the table and bus from the deployed stack's outputs, and points the SDK clients at them. */
/** The deployed stack's outputs (`--stack NAME`, default Fleetscope; `--region R`). */
export async function readStackOutputs(
  flags: Pick<TargetFlags, 'stack' | 'region'>,
): Promise<{ stackName: string; outputs: Record<string, string> }> {
  const stackName = flags.stack ?? 'Fleetscope';
  const region = flags.region ?? process.env.AWS_REGION;
  const cfn = new CloudFormationClient(region ? { region } : {});
  try {
    const out = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs = Object.fromEntries(
      (out.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']),
    );
    return { stackName, outputs };
  } catch (err) {
    // The SDK's message is the cause the operator can act on (no credentials, no region, stack missing).
    const cause = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new Error(
      `cannot read the outputs of stack "${stackName}" (${cause}): deploy it first, or check credentials and --stack/--region`,
    );
  } finally {
    cfn.destroy();
  }
}

async function openAws(flags: TargetFlags): Promise<CliContext> {
  const region = flags.region ?? process.env.AWS_REGION;
  const { stackName, outputs } = await readStackOutputs(flags);
  for (const key of ['TableName', 'BusName', 'IdempotencyTableName', 'KubeconfigSecretPrefix']) {
    if (!outputs[key])
      throw new Error(`stack "${stackName}" has no output ${key}; is it a fleetscope stack?`);
  }
  process.env[ENV.table] = outputs.TableName;
  process.env[ENV.bus] = outputs.BusName;
  process.env[ENV.idempotencyTable] = outputs.IdempotencyTableName;
  process.env[ENV.secretPrefix] = outputs.KubeconfigSecretPrefix;
  // Stacks from before owners were recorded have no ControlPlane output: registrations stay unowned.
  if (outputs.ControlPlane) process.env[ENV.controlPlane] = outputs.ControlPlane;
  if (region) process.env.AWS_REGION = region;
  resetDeps();
  const { db, publisher } = deps();
  return {
    mode: 'aws',
    db,
    table: outputs.TableName!,
    registry: new DynamoRegistry(db, outputs.TableName!),
    publisher,
    ...(outputs.VerifyFunctionName ? { verifyFunction: outputs.VerifyFunctionName } : {}),
    close: async () => resetDeps(),
  };
}

/** Runs `fn` in a context opened for `flags`, and closes the context however `fn` ends. */
export async function withContext(
  flags: TargetFlags,
  fn: (ctx: CliContext) => Promise<number>,
): Promise<number> {
  const ctx = await openContext(flags);
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

/** The registered cluster of that name; the same "not registered" error on every command otherwise. */
export async function registeredCluster(ctx: CliContext, name: string) {
  const cluster = await ctx.registry.get(name);
  if (!cluster)
    throw new Error(`cluster "${name}" is not registered (fleetscope cluster list shows those that are)`);
  return cluster;
}
