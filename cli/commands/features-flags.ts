/**
 * The flags of `fleetscope features`, every subcommand's in one set (parseFlags reads them all at once):
 * a module of its own so that the subcommands' modules (features-rollout.ts ...) take the parsed flags'
 * type without importing the command that dispatches to them.
 */
import { type parseFlags, targetOptions } from '../context.js';
import { outputOptions } from '../output.js';
import { registerOptions } from './features-register.js';

/** `features rollout`'s own flags. */
const rolloutOptions = {
  to: { type: 'string' },
  waves: { type: 'string' },
  pause: { type: 'string' },
  selector: { type: 'string' },
  'stuck-after': { type: 'string' },
  'fail-after': { type: 'string' },
  id: { type: 'string' },
  'no-rollback': { type: 'boolean' },
  approval: { type: 'boolean' },
  wave: { type: 'string' },
} as const;

export const options = {
  ...targetOptions,
  ...outputOptions,
  ...rolloutOptions,
  ...registerOptions,
  cluster: { type: 'string' },
  feature: { type: 'string' },
  desired: { type: 'string' },
  'keep-state': { type: 'boolean' },
  offline: { type: 'boolean' },
  kubernetes: { type: 'string' },
  fleetscope: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'sort-by': { type: 'string' },
  task: { type: 'string' },
  reason: { type: 'string' },
} as const;

export type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];
