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

/** Throws when `fleetscope <command> <args>` only reads and its local state directory is absent. */
export function refuseMissingStateDir(command: string, args: string[]): void {
  // Only the flags that matter here are declared; the command itself parses the rest strictly.
  const { values, positionals } = parseArgs({
    args,
    options: { 'state-dir': { type: 'string' }, aws: { type: 'boolean' } },
    strict: false,
    allowPositionals: true,
  });
  if (values.aws || !READ_ONLY[command]?.includes(positionals[0] ?? '')) return;
  // As context.ts's stateDirOf resolves it; not imported from there, which loads the AWS SDK.
  const flag = typeof values['state-dir'] === 'string' ? values['state-dir'] : undefined;
  const dir = resolve(flag ?? process.env.FLEETSCOPE_STATE_DIR ?? '.fleetscope');
  if (!existsSync(dir))
    throw new Error(
      `state directory ${dir} does not exist, so there is nothing to read; give --state-dir the directory npm start or an earlier command used`,
    );
}
