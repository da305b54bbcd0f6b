/**
 * One `fleetscope <name> ...` command. Each lives in cli/commands/<name>.ts and is listed in cli/main.ts.
 * `run` gets the arguments after the command name and returns the process exit code; it throws a
 * UsageError for bad arguments (printed with the command's usage, exit 2).
 */
export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  run(args: string[]): Promise<number>;
}

export class UsageError extends Error {
  override name = 'UsageError';
}
