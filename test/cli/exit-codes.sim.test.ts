/**
 * Every command's error paths, run through bin/fleetscope as users run it, held to the one list of exit
 * codes (cli/exit-codes.ts, the README's table): 1 when the command ran and the world said no (one line
 * on stderr, no usage hint), 2 when the command line is wrong (the wrong flag named, then the hint).
 * Every command of cli/main.ts has a case of each code, or says why it cannot fail that way.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT, type ExitKind } from '../../cli/exit-codes.js';
import { commands } from '../../cli/main.js';
import { type DemoFleet, startDemoFleet } from '../../local/demo-fleet.js';
import { fleetscope } from './bin.js';

interface Case {
  args: string[];
  kind: Exclude<ExitKind, 'done'>;
  /** What stderr (or, for a result printed as data, stdout) must say. */
  says: RegExp;
  /** What it must not say. */
  not?: RegExp;
  /** The reason is the data on stdout (a diff, as kubectl diff prints it), not a line on stderr. */
  onStdout?: boolean;
}

let fleet: DemoFleet;
let dir: string;
let stateDir: string;
const C = 'demo-1';
const cli = (...args: string[]) => fleetscope(args, { env: { FLEETSCOPE_STATE_DIR: stateDir } });

const CASES = (): Case[] => [
  { args: ['clustr', 'list'], kind: 'usage', says: /unknown command "clustr"; did you mean "cluster"\?/ },
  {
    args: ['cluster', 'deregister', '--name', 'nope'],
    kind: 'refused',
    says: /cluster "nope" is not registered/,
  },
  { args: ['cluster', 'list', '--sort-by', 'size'], kind: 'usage', says: /--sort-by size: use one of name/ },
  { args: ['cluster', 'lst'], kind: 'usage', says: /unknown subcommand "lst"; did you mean "list"\?/ },
  {
    args: ['clusterset', 'join', '--cluster', 'nope', '--set', 'blue'],
    kind: 'refused',
    says: /not registered/,
  },
  {
    args: ['clusterset', 'join', '--cluster', C, '--set', 'NOT VALID'],
    kind: 'usage',
    says: /--set: ClusterSet name .*"NOT VALID" is not an RFC 1123 label/,
  },
  { args: ['claims', 'get', '--cluster', 'nope'], kind: 'refused', says: /not registered/ },
  {
    args: ['claims', 'get', '-o'],
    kind: 'usage',
    says: /^fleetscope claims: -o needs a value: table, wide, json/,
  },
  {
    args: ['claims', 'set', '--cluster', C, '--name', 'id.k8s.io', '--value', 'NOT VALID'],
    kind: 'usage',
    says: /id\.k8s\.io value "NOT VALID" is not an RFC 1123 label/,
  },
  {
    args: ['claims', 'set', '--cluster', C, '--name', '-a.example.com', '--value', 'x'],
    kind: 'usage',
    says: /-a\.example\.com/,
    not: /ambiguous/,
  },
  {
    args: ['claims', 'check', '--cluster', C, '--dry-run'],
    kind: 'refused',
    says: /demo-1: 1 write\(s\) needed\n {2}would create zone\.example\.com/,
    onStdout: true,
  },
  {
    args: ['balloons', 'status', '--cluster', C, '--node', 'nope'],
    kind: 'refused',
    says: /node "nope" is not among/,
  },
  {
    args: ['balloons', 'resize', '--cluster', C, '--node', 'n1', '--cpu', 'lots', '--memory', '1Gi'],
    kind: 'usage',
    says: /"lots" is not a cpu quantity/,
  },
  {
    args: ['features', 'get', '--cluster', C, '--feature', 'nope'],
    kind: 'refused',
    says: /unknown feature "fleetscope-system\/nope"/,
  },
  {
    args: ['features', 'get', '--cluster', C, '--feature', 'Not_Valid'],
    kind: 'usage',
    says: /--feature Not_Valid: feature name "Not_Valid" is not an RFC 1123 label/,
  },
  {
    args: ['features', 'unregister', '--feature', 'acme/nope'],
    kind: 'refused',
    says: /acme\/nope is not a registered feature/,
  },
  { args: ['features', 'unregister'], kind: 'usage', says: /unregister needs --feature NAMESPACE\/NAME/ },
  {
    args: ['features', 'register', '--file', join(dir, 'widgets.yaml'), '-o', 'xml'],
    kind: 'usage',
    says: /-o xml: use one of/,
  },
  {
    args: ['features', 'rollout', '--feature', 'balloons', '--to', 'on', '--waves', '100%', '--pause', '1h'],
    kind: 'refused',
    says: /rollout \S+ of fleetscope-system\/balloons is running: halt it first/,
  },
  {
    args: ['recommendations', 'get', '--cluster', C, '--daemonset', 'monitoring/nosuch'],
    kind: 'refused',
    says: /no node-scoped recommendations for monitoring\/nosuch/,
  },
  {
    args: ['recommendations', 'get', '--cluster', C],
    kind: 'usage',
    says: /get needs --daemonset NAMESPACE\/NAME/,
  },
  {
    args: ['recommend', '--input', join(dir, 'none.json')],
    kind: 'refused',
    says: /cannot read .*none\.json: no such file/,
  },
  { args: ['recommend'], kind: 'usage', says: /--input FILE is required/ },
  { args: ['rbac'], kind: 'usage', says: /name the identity to bind/ },
  { args: ['rbac', '--user', 'u', '-o', 'xml'], kind: 'usage', says: /-o xml: use one of yaml, json/ },
  {
    args: ['report', '--out', join(dir, 'no-dir', 'r.html')],
    kind: 'refused',
    says: /cannot write .*the directory .* does not exist/,
  },
  { args: ['report'], kind: 'usage', says: /report needs --out FILE/ },
  { args: ['run', '--once', '--cluster', 'nope'], kind: 'refused', says: /cluster "nope" is not registered/ },
  {
    args: ['run', '--once', '--speedup', '0'],
    kind: 'usage',
    says: /--speedup needs a decimal number of at least 1, got "0"/,
    not: /9007199254740991/,
  },
  {
    args: ['sim', '--clusters', '1', '--nodes', '1', '--kubeconfig-out', join(dir, 'demo.yaml')],
    kind: 'refused',
    says: /demo\.yaml exists; pass --force/,
  },
  { args: ['sim', '--nodes', '1'], kind: 'usage', says: /--clusters is required/ },
];

/** Commands that cannot meet the world's refusal, and why. */
const NEVER_REFUSED: Record<string, string> = {
  rbac: 'prints manifests from the catalogue alone: it reads no state and reaches no cluster',
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetscope-exit-codes-'));
  stateDir = join(dir, 'state');
  const kubeconfig = join(dir, 'demo.yaml');
  fleet = await startDemoFleet({ clusters: 1, nodes: 3, kubeconfigPath: kubeconfig, clockSpeedup: 0 });
  writeFileSync(join(dir, 'widgets.yaml'), 'features:\n  - namespace: acme\n    name: widgets\n');
  const steps = [
    ['cluster', 'register', '--name', C, '--kubeconfig', kubeconfig, '--context', C],
    [
      'balloons',
      'policy',
      'set',
      '--cluster',
      C,
      '--name',
      'general',
      '--selector',
      'kubernetes.io/os=linux',
      '--max-cpu',
      '64',
      '--max-memory',
      '256Gi',
    ],
    ['run', '--once', '--cluster', C],
    ['claims', 'set', '--cluster', C, '--name', 'zone.example.com', '--value', 'eu-1a'],
    // A rollout that waits an hour after its wave: the second one is refused while it runs.
    ['features', 'rollout', '--feature', 'balloons', '--to', 'on', '--waves', '100%', '--pause', '1h'],
  ];
  for (const args of steps) {
    const r = await cli(...args);
    expect([r.code, r.err], args.join(' ')).toEqual([0, '']);
  }
  // Edited by hand in the cluster: the drift check has a write to make.
  fleet.sim.cluster(C).store.delete('clusterproperties.about.k8s.io', 'zone.example.com');
}, 300_000);
afterAll(async () => {
  await fleet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('exit codes, held to cli/exit-codes.ts', () => {
  it('has a case of each code for every command', () => {
    const cases = CASES();
    for (const name of Object.keys(commands)) {
      const kinds = new Set(cases.filter((c) => c.args[0] === name).map((c) => c.kind));
      expect(kinds.has('usage'), `${name}: no usage-error case`).toBe(true);
      if (!NEVER_REFUSED[name]) expect(kinds.has('refused'), `${name}: no refused case`).toBe(true);
    }
  });

  it('exits with the code of each case, saying it in the shape the table promises', async () => {
    const seen: string[] = [];
    for (const c of CASES()) {
      const r = await cli(...c.args);
      const where = `fleetscope ${c.args.join(' ')}\n${r.out}\n${r.err}`;
      expect(r.code, where).toBe(EXIT[c.kind]);
      const lines = r.err ? r.err.split('\n') : [];
      const name = commands[c.args[0]!] ? c.args[0] : undefined;
      if (c.kind === 'usage') {
        expect(lines[0], where).toMatch(name ? `fleetscope ${name}: ` : 'fleetscope: ');
        if (name) expect(lines.at(-1), where).toBe(`run "fleetscope ${name} --help" for usage`);
      } else if (c.onStdout) expect(r.err, where).toBe('');
      else expect(lines, where).toEqual([expect.stringMatching(`^fleetscope ${name}: `)]);
      expect(c.onStdout ? r.out : r.err, where).toMatch(c.says);
      if (c.not) expect(r.out + r.err, where).not.toMatch(c.not);
      seen.push(c.args.slice(0, 2).join(' '));
    }
    expect(seen.length).toBe(CASES().length);
  }, 600_000);
});
