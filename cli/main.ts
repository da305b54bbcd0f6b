import type { CliCommand } from './command.js';
import { didYouMean, UsageError } from './command.js';
import { EXIT } from './exit-codes.js';
import { FORMATS_TEXT, knownFormat } from './output.js';
import { localStateDir, refuseMissingStateDir } from './read-only.js';

// Commands are loaded lazily so that `fleetscope recommend` does not pay for the AWS SDK or the simulator.
export const commands: Record<string, { summary: string; load: () => Promise<CliCommand> }> = {
  cluster: {
    summary: 'register, list and deregister the clusters of the fleet',
    load: async () => (await import('./commands/cluster.js')).command,
  },
  clusterset: {
    summary: 'join, leave or move between ClusterSets (KEP-2149 membership)',
    load: async () => (await import('./commands/clusterset.js')).command,
  },
  claims: {
    summary: 'get, set, delete and check cluster claims (id.k8s.io and custom claims, KEP-2149)',
    load: async () => (await import('./commands/claims.js')).command,
  },
  balloons: {
    summary: 'resizable nodes with balloon pods (KEP-5620): status, explicit sizes, pool policies',
    load: async () => (await import('./commands/balloons.js')).command,
  },
  features: {
    summary: 'feature lifecycle (KEP-3920): list, get, set, history, register, check-upgrade, rollout',
    load: async () => (await import('./commands/features.js')).command,
  },
  report: {
    summary: 'the fleet as one self-contained HTML report with charts (local state, or the stack’s from S3)',
    load: async () => (await import('./commands/report.js')).command,
  },
  sim: {
    summary: 'run the Kubernetes API simulator (a fleet of clusters over HTTPS)',
    load: async () => (await import('./commands/sim.js')).command,
  },
  recommend: {
    summary: "compute one scope's recommendation offline from a history file",
    load: async () => (await import('./commands/recommend.js')).command,
  },
  rbac: {
    summary: "print the least-privilege RBAC for fleetscope's identity in a cluster",
    load: async () => (await import('./commands/rbac.js')).command,
  },
  run: {
    summary: "run the capabilities' cycles against the registered clusters (once, or on their schedules)",
    load: async () => (await import('./commands/run.js')).command,
  },
  recommendations: {
    summary:
      'node-scoped DaemonSet recommendations (KEP-4943): list, get per node, install the scoped VPA CRD',
    load: async () => (await import('./commands/recommendations.js')).command,
  },
};

function help(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  const rows = Object.entries(commands).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`);
  return [
    'usage: fleetscope <command> [options]',
    '',
    'commands:',
    ...rows,
    '',
    'fleetscope <command> --help for its options; fleetscope --version for the version',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === 'version') {
    console.log(`fleetscope ${await version()}`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return name ? EXIT.done : EXIT.usage;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    const hint = didYouMean(name, Object.keys(commands));
    console.error(`fleetscope: unknown command "${name}"${hint}; fleetscope --help lists the commands`);
    return EXIT.usage;
  }
  const wantsUsage = rest.includes('--help') || rest.includes('-h');
  const stateDir = wantsUsage ? undefined : localStateDir(name, rest);
  // The state's server (when none serves it yet) starts while the command's modules load.
  if (stateDir) (await import('../local/state/connect.js')).openStateEarly(stateDir);
  const command = await entry.load();
  if (wantsUsage) {
    console.log(command.usage);
    return 0;
  }
  try {
    // Manifest commands (rbac, report) name their own formats.
    if (!Object.values(command.outputs ?? {}).every((o) => o === 'manifests')) refuseUnknownFormat(rest);
    refuseMissingStateDir(name, rest);
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      // The one thing that is wrong, and where the rest is: the whole usage would bury the error.
      console.error(`fleetscope ${name}: ${err.message}\nrun "fleetscope ${name} --help" for usage`);
      return EXIT.usage;
    }
    console.error(`fleetscope ${name}: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT.refused;
  }
}

/**
 * `-o FORMAT` naming no format at all is wrong on every command, those that print only a confirmation
 * included (which would otherwise ignore it and exit 0); each command still refuses a known format it
 * has no form for.
 */
function refuseUnknownFormat(args: string[]): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return;
    const value = a === '-o' || a === '--output' ? args[i + 1] : /^(?:-o=?|--output=)(.+)$/.exec(a)?.[1];
    if (value !== undefined && !value.startsWith('-') && !knownFormat(value))
      throw new UsageError(`-o ${value}: use one of ${FORMATS_TEXT}`);
  }
}

/** The package's version (read at run time: the bundle and the sources share package.json). */
async function version(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(await readFile(new URL(rel, import.meta.url), 'utf8'));
      if (pkg.name === 'fleetscope') return pkg.version;
    } catch {}
  }
  return 'unknown';
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('cli/main.ts')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
