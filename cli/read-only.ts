/**
 * Commands that only read refuse a state directory that does not exist: opening one would create an
 * empty state there and answer "nothing registered", which hides a mistyped --state-dir.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const READ_ONLY: Record<string, string[]> = {
  cluster: ['list'],
  clusterset: ['list'],
  claims: ['get', 'dns'],
  recommendations: ['list', 'get', 'checkpoints'],
};

/** Commands that act on the local state unless --aws is given. */
const LOCAL_STATE = new Set([
  'cluster',
  'clusterset',
  'claims',
  'balloons',
  'features',
  'recommendations',
  'report',
  'run',
]);

/** Only the flags that matter here are declared; the command itself parses the rest strictly. */
function stateFlags(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    options: { 'state-dir': { type: 'string' }, aws: { type: 'boolean' } },
    strict: false,
    allowPositionals: true,
  });
  // As context.ts's stateDirOf resolves it; not imported from there, which loads the AWS SDK.
  const flag = typeof values['state-dir'] === 'string' ? values['state-dir'] : undefined;
  const dir = resolve(flag ?? process.env.FLEETSCOPE_STATE_DIR ?? '.fleetscope');
  return { aws: values.aws === true, subcommand: positionals[0] ?? '', dir };
}

/**
 * The existing local state directory `fleetscope <command> <args>` will open, if any: main.ts starts
 * opening it (and its server) while the command's modules load.
 */
export function localStateDir(command: string, args: string[]): string | undefined {
  if (!LOCAL_STATE.has(command)) return undefined;
  const { aws, dir } = stateFlags(args);
  return !aws && existsSync(dir) ? dir : undefined;
}

/** Throws when `fleetscope <command> <args>` only reads and its local state directory is absent. */
export function refuseMissingStateDir(command: string, args: string[]): void {
  const { aws, subcommand, dir } = stateFlags(args);
  if (aws || !READ_ONLY[command]?.includes(subcommand)) return;
  if (!existsSync(dir))
    throw new Error(
      `state directory ${dir} does not exist, so there is nothing to read; give --state-dir the directory npm start or an earlier command used`,
    );
}
