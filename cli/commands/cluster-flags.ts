/** `fleetscope cluster`'s flags, apart so its subcommands' modules (cluster-refresh.ts) need not import it. */
import { type parseFlags, targetOptions } from '../context.js';
import { outputOptions } from '../output.js';

export const options = {
  ...targetOptions,
  name: { type: 'string' },
  kubeconfig: { type: 'string' },
  'secret-id': { type: 'string' },
  context: { type: 'string' },
  'assume-role': { type: 'string' },
  'external-id': { type: 'string' },
  from: { type: 'string' },
  force: { type: 'boolean' },
  label: { type: 'string', multiple: true },
  cluster: { type: 'string', multiple: true },
  ...outputOptions,
  'sort-by': { type: 'string' },
} as const;

export type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];
