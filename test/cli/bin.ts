/**
 * `fleetscope ...` exactly as a user runs it: the shell launcher bin/fleetscope (what `npm link` puts on
 * PATH), which execs the project's Node 24 on the bundle.
 */
import { join } from 'node:path';
import { REPO_ROOT } from '../../local/runtime.js';
import { runFleetscope } from '../support/cli.js';

export const LAUNCHER = join(REPO_ROOT, 'bin', 'fleetscope');

export const fleetscope = (
  args: string[],
  opts: Omit<Parameters<typeof runFleetscope>[1], 'launcher'> = {},
) => runFleetscope(args, { ...opts, launcher: LAUNCHER });
