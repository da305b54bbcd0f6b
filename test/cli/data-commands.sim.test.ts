/**
 * kubectl-style output on EVERY data command, table-driven from the commands' own registry (each
 * command's `outputs` in cli/commands/*.ts, reached through cli/main.ts): -o json and -o yaml both parse
 * and carry the same fields, --json is -o json, and the table form shows the same rows. A data
 * subcommand with no case here fails the registry test, and so does a subcommand in a usage text that
 * the registry does not list.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { commands } from '../../cli/main.js';
import { addElasticPool } from '../../local/demo-balloons.js';
import { demoFleetSpecs, demoVpas } from '../../local/demo-fleet.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { runFleetscopeInProcess, startFleetscope } from '../support/cli.js';
import { tableProblems } from '../support/table-vocabulary.js';

// biome-ignore lint/suspicious/noExplicitAny: documents of many shapes, read by each case
type Doc = any;
type Format = 'json' | 'yaml' | 'table' | 'wide';

interface Case {
  args: (format: Format) => string[];
  /** What identifies each row of the document; every one must appear in the table form. */
  rows: (doc: Doc) => string[];
  /** It changes state (or reports times), so two runs differ in values: only the fields must agree. */
  mutates?: boolean;
  /** Runs as its own process (it serves until interrupted). */
  process?: boolean;
  /** Exit codes that still print the data (check-upgrade exits 1 when something blocks). */
  codes?: number[];
}

let sim: Simulator;
let dir: string;
let stateDir: string;
let kubeconfig: string;
let history: string;
let checkpoints: string;

const C = 'demo-1';
const DS = ['--cluster', C, '--daemonset', 'monitoring/node-agent'];

const CASES: Record<string, Case> = {
  'cluster list': { args: () => ['cluster', 'list'], rows: (d) => d.map((r: Doc) => r.cluster.name) },
  'cluster refresh': {
    args: () => ['cluster', 'refresh'],
    rows: (d) => d.map((r: Doc) => r.cluster),
    mutates: true,
  },
  'clusterset join': {
    args: () => ['clusterset', 'join', '--cluster', C, '--set', 'blue'],
    rows: () => ['blue'],
    mutates: true,
  },
  'clusterset list': { args: () => ['clusterset', 'list'], rows: (d) => d.map((m: Doc) => m.cluster) },
  'clusterset move': {
    args: (f) => ['clusterset', 'move', '--cluster', C, '--to', `green-${f}`],
    rows: () => ['green-table'],
    mutates: true,
  },
  'clusterset leave': {
    args: () => ['clusterset', 'leave', '--cluster', C],
    rows: () => [C],
    mutates: true,
  },
  'claims get': { args: () => ['claims', 'get'], rows: (d) => d.map((v: Doc) => v.cluster) },
  'claims set': {
    args: (f) => ['claims', 'set', '--cluster', C, '--name', 'team.example.com', '--value', f],
    rows: () => ['team.example.com'],
    mutates: true,
  },
  'claims check': {
    args: () => ['claims', 'check'],
    rows: (d) => d.map((r: Doc) => `${r.cluster}: ${r.state}`),
    mutates: true,
  },
  'claims dns': {
    args: () => [
      'claims',
      'dns',
      '--cluster-id',
      'c1',
      '--service',
      's',
      '--namespace',
      'n',
      '--hostname',
      'h',
    ],
    rows: (d) => [d.dnsName],
  },
  'claims config': { args: () => ['claims', 'config'], rows: (d) => [`ocm          ${d.ocm}`] },
  'claims reconcile': {
    args: () => ['claims', 'reconcile'],
    rows: (d) => [`examined ${d.identities} identities`],
    mutates: true,
  },
  'balloons status': {
    args: () => ['balloons', 'status'],
    rows: (d) => d.clusters.flatMap((c: Doc) => c.nodes.map((n: Doc) => n.node)),
  },
  'balloons policy get': {
    args: () => ['balloons', 'policy', 'get', '--cluster', C],
    rows: (d) => d.policies.map((p: Doc) => p.name),
  },
  'features list': {
    args: () => ['features', 'list', '--offline'],
    rows: (d) => d.features.map((f: Doc) => f.feature),
  },
  'features get': {
    args: () => ['features', 'get', '--cluster', C, '--feature', 'balloons', '--offline'],
    rows: (d) => [d.feature],
  },
  'features history': {
    args: () => ['features', 'history', '--cluster', C, '--feature', 'balloons'],
    rows: (d) => d.history.map((t: Doc) => t.startedAt),
  },
  'features plan': {
    args: () => ['features', 'plan', '--cluster', C, '--feature', 'balloons', '--desired', 'off'],
    rows: (d) => [d.feature, ...d.steps.map((s: Doc) => s.object)],
  },
  'features check-upgrade': {
    args: () => ['features', 'check-upgrade', '--kubernetes', '1.36.0'],
    rows: (d) => d.blockers.map((b: Doc) => b.reason.slice(0, 30)),
    codes: [0, 1],
  },
  'features reconcile': {
    args: () => ['features', 'reconcile'],
    rows: (d) => d.flatMap((r: Doc) => r.features.map((f: Doc) => f.feature)),
    mutates: true,
  },
  'features rollout': {
    // One rollout per format: a feature has one rollout at a time.
    args: (f) => [
      'features',
      'rollout',
      '--feature',
      { json: 'balloons', yaml: 'nodescope', table: 'claims', wide: 'features' }[f],
      '--to',
      'on',
      '--waves',
      '100%',
      '--pause',
      '1m',
    ],
    rows: (d) => ['wave 1 (canary)', ` ${d.to} over `],
    mutates: true,
  },
  'features rollout status': {
    args: () => ['features', 'rollout', 'status'],
    rows: (d) => d.rollouts.map((r: Doc) => r.id),
  },
  'recommendations list': {
    args: () => ['recommendations', 'list'],
    rows: (d) => d.map((h: Doc) => `${h.namespace}/${h.name}`),
  },
  'recommendations get': {
    args: () => ['recommendations', 'get', ...DS],
    rows: (d) => Object.keys(d.nodes),
  },
  'recommendations checkpoints': {
    args: () => ['recommendations', 'checkpoints', ...DS],
    rows: (d) => d.items.map((i: Doc) => i.metadata.name),
  },
  'recommendations history': {
    args: () => ['recommendations', 'history', ...DS],
    rows: (d) => d.nodes.map((n: Doc) => n.node),
  },
  'recommendations import-checkpoints': {
    args: () => ['recommendations', 'import-checkpoints', ...DS, '--file', checkpoints],
    rows: (d) => [`${d.imported} checkpoint(s) imported`],
    mutates: true,
  },
  recommend: {
    args: () => ['recommend', '--input', history],
    rows: (d) => d.containers.map((c: Doc) => c.name),
  },
  run: {
    args: () => ['run', '--once', '--capability', 'inventory'],
    rows: (d) => d.results.map((r: Doc) => r.cluster),
    mutates: true,
  },
  sim: {
    args: (f) => ['sim', '--clusters', '2', '--nodes', '1', '--kubeconfig-out', join(dir, `sim-${f}.yaml`)],
    rows: (d) => d.clusters.map((c: Doc) => `context ${c.name}`),
    mutates: true,
    process: true,
  },
};

/** Every key path of a document (array elements merged), to compare what two documents carry. */
function fields(doc: Doc, path = ''): string[] {
  if (Array.isArray(doc)) return [...new Set(doc.flatMap((d) => fields(d, `${path}[]`)))].sort();
  if (doc && typeof doc === 'object')
    return Object.entries(doc)
      .flatMap(([k, v]) => [`${path}.${k}`, ...fields(v, `${path}.${k}`)])
      .sort();
  return [];
}

async function output(c: Case, format: Format, extra: string[] = []): Promise<string> {
  const base = c.args(format);
  const flags = ['-o', format, ...extra];
  const args = base.includes('-o') ? base : [...base, ...flags];
  if (c.process) {
    const ready = (out: string) =>
      format === 'table'
        ? out.includes('Ctrl-C stops')
        : (() => {
            try {
              return Boolean((format === 'json' ? JSON.parse(out) : parse(out))?.clusters);
            } catch {
              return false;
            }
          })();
    const p = await startFleetscope(args, ready);
    const out = p.out();
    await p.stop();
    return out;
  }
  const local = args[0] === 'recommend' ? {} : { stateDir };
  const r = await runFleetscopeInProcess(args, local);
  expect(r.err, args.join(' ')).toBe('');
  expect(c.codes ?? [0], args.join(' ')).toContain(r.code);
  return r.out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetscope-data-commands-'));
  stateDir = join(dir, 'state');
  kubeconfig = join(dir, 'kubeconfig.yaml');
  sim = await startSimulator({ clusters: demoFleetSpecs(1, 3) });
  addElasticPool(sim);
  for (const vpa of demoVpas(0)) sim.cluster(C).store.put('verticalpodautoscalers.autoscaling.k8s.io', vpa);
  await sim.writeKubeconfig(kubeconfig);
  const setup = [
    ['cluster', 'register', '--name', C, '--kubeconfig', kubeconfig, '--context', C],
    ['balloons', 'policy', 'set', '--cluster', C, '--name', 'elastic', '--selector', 'pool=elastic'],
    ['run', '--once'],
  ];
  setup[1]?.push('--max-cpu', '7', '--max-memory', '28Gi', '--cooldown-minutes', '0');
  for (const args of setup) {
    const r = await runFleetscopeInProcess(args, { stateDir });
    expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
  }
  const list = await runFleetscopeInProcess(['recommendations', 'checkpoints', ...DS], { stateDir });
  checkpoints = join(dir, 'checkpoints.json');
  writeFileSync(checkpoints, list.out);
  history = join(dir, 'history.json');
  const t = (h: number) => new Date(Date.UTC(2026, 0, 1, h)).toISOString();
  const hours = Array.from({ length: 24 }, (_, h) => h);
  writeFileSync(
    history,
    JSON.stringify({
      containers: [
        {
          name: 'agent',
          cpuSamples: hours.map((h) => ({ t: t(h), millicores: 100 + h })),
          memorySamples: hours.map((h) => ({ t: t(h), bytes: 200 * 2 ** 20 })),
          requests: { cpu: '250m', memory: '128Mi' },
        },
      ],
    }),
  );
}, 120_000);
afterAll(async () => {
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the registry of data commands', () => {
  it('every command declares its outputs, every subcommand in its usage is declared, every data one has a case', async () => {
    const missing: string[] = [];
    for (const [name, entry] of Object.entries(commands)) {
      const command = await entry.load();
      const outputs = command.outputs;
      if (!outputs) {
        missing.push(`${name}: no outputs declared in its CliCommand`);
        continue;
      }
      for (const sub of subcommandsInUsage(name, command.usage, outputs))
        if (!(sub in outputs)) missing.push(`${name} ${sub}: in the usage, not in outputs`);
      for (const [sub, kind] of Object.entries(outputs)) {
        const key = sub ? `${name} ${sub}` : name;
        if (kind === 'data' && !CASES[key]) missing.push(`${key}: a data command without a case here`);
      }
    }
    expect(missing).toEqual([]);
  });
});

/** The subcommands a usage text shows ("fleetscope balloons policy get ..." gives "policy get"). */
function subcommandsInUsage(name: string, usage: string, outputs: Record<string, unknown>): string[] {
  const found = new Set<string>();
  for (const m of usage.matchAll(new RegExp(`fleetscope ${name}((?: +[a-z][a-z|-]*)*)`, 'g'))) {
    const [first = '', second = ''] = (m[1] ?? '').trim().split(/ +/);
    for (const a of first.split('|'))
      for (const b of second.split('|')) found.add(b && `${a} ${b}` in outputs ? `${a} ${b}` : a);
  }
  return [...found];
}

describe('-o on every data command', () => {
  it.each(Object.entries(CASES))(
    '%s: json and yaml carry the same fields, the table the same rows',
    async (_, c) => {
      const json = JSON.parse(await output(c, 'json'));
      const yaml = parse(await output(c, 'yaml'));
      if (c.mutates) expect(fields(yaml)).toEqual(fields(json));
      else {
        expect(yaml).toEqual(json);
        expect(JSON.parse(await output(c, 'json', ['--json']).then((o) => o))).toEqual(json);
      }
      const table = await output(c, 'table');
      const rows = c.rows(json);
      for (const row of rows) expect(table).toContain(row);
      expect(table).not.toMatch(/^\s*[[{]/); // a table, not a document
      // One vocabulary: units and empty cells, in the table and in its wide form.
      expect(tableProblems(table)).toEqual([]);
      if (!c.mutates) expect(tableProblems(await output(c, 'wide'))).toEqual([]);
    },
  );

  it.each([
    'cluster list',
    'claims get',
    'balloons status',
    'features list',
    'features rollout status',
    'recommendations list',
    'recommendations get',
    'recommendations checkpoints',
    'recommendations history',
    'run',
  ])('%s: -o wide adds columns to the table', async (key) => {
    const c = CASES[key] as Case;
    const header = (out: string) =>
      (out.split('\n').find((l) => /^(CLUSTER|NAME|NODE|ID) {2,}/.test(l)) ?? '').trim().split(/ {2,}/);
    const table = header(await output(c, 'table'));
    const wide = header(await output(c, 'wide' as Format));
    expect(table.length).toBeGreaterThan(2);
    expect(wide.length).toBeGreaterThan(table.length);
    expect(wide).toEqual(expect.arrayContaining(table));
  });

  it.each([
    [['cluster', 'list'], 'name, nodes, observed, version, reachable'],
    [['claims', 'get'], 'cluster, id, clusterset'],
    [['balloons', 'status'], 'node, pool, free, balloon, blocked'],
    [['features', 'list'], 'cluster, feature, state, updated'],
    [['recommendations', 'list'], 'name, nodes, scopes, as-of'],
  ])('%s --sort-by: an unknown key is a usage error naming the valid ones', async (args, valid) => {
    const r = await runFleetscopeInProcess([...args, '--sort-by', 'bogus'], { stateDir });
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(`fleetscope ${args[0]}: --sort-by bogus: use one of ${valid}`);
  });

  it('--sort-by orders the rows, filters narrow them', async () => {
    const byNode = await output(CASES['balloons status'] as Case, 'json');
    const names = JSON.parse(byNode).clusters[0].nodes.map((n: Doc) => n.node);
    expect(names).toEqual([...names].sort());
    const pool = JSON.parse(
      await output({ args: () => ['balloons', 'status', '--pool', 'elastic'], rows: () => [] }, 'json'),
    );
    const pools = pool.clusters[0].nodes.map((n: Doc) => n.pool);
    expect(pools.length).toBeGreaterThan(0);
    const byFree = JSON.parse(
      await output({ args: () => ['balloons', 'status', '--sort-by', 'free'], rows: () => [] }, 'json'),
    ).clusters[0].nodes.map((n: Doc) => n.free.cpuMillicores);
    expect(byFree).toEqual([...byFree].sort((a, b) => b - a));
    expect(new Set(pools)).toEqual(new Set(['elastic']));
    const none = await runFleetscopeInProcess(['balloons', 'status', '--pool', 'nope'], { stateDir });
    expect(none.out).toBe(`no balloons:\n  ${C}: no pool nope with a balloon`);
    const features = JSON.parse(
      await output(
        { args: () => ['features', 'list', '--offline', '--sort-by', 'feature'], rows: () => [] },
        'json',
      ),
    ).features.map((f: Doc) => f.feature);
    expect(features).toEqual([...features].sort());
    const other = await runFleetscopeInProcess(['features', 'list', '--offline', '-n', 'elsewhere'], {
      stateDir,
    });
    expect(other.out).toBe('no feature records in namespace elsewhere');
  });

  it('rbac prints manifests: -o json is a List of what -o yaml has as documents; there is no table', async () => {
    const args = ['rbac', '--user', 'ops'];
    const json = JSON.parse((await runFleetscopeInProcess([...args, '-o', 'json'])).out);
    const docs = parseAllDocuments((await runFleetscopeInProcess([...args, '-o', 'yaml'])).out).map((d) =>
      d.toJS(),
    );
    expect(json.items).toEqual(docs);
    expect(JSON.parse((await runFleetscopeInProcess([...args, '--json'])).out)).toEqual(json);
    const table = await runFleetscopeInProcess([...args, '-o', 'table']);
    expect(table.code).toBe(2);
    expect(table.err).toMatch(/manifests have no table form/);
  });

  it('report prints its figures: -o json and -o yaml are the same document', async () => {
    const json = JSON.parse(await output({ args: () => ['report'], rows: () => [] }, 'json'));
    const yaml = parse(await output({ args: () => ['report'], rows: () => [] }, 'yaml'));
    expect(Object.keys(json).length).toBeGreaterThan(0);
    expect(fields(yaml)).toEqual(fields(json));
  });

  it('the data in JSON uses the shared vocabulary: no table placeholders, amounts with their unit', async () => {
    // One at a time: in-process runs capture the console.
    const docs: Doc[] = [];
    for (const k of ['cluster list', 'recommendations list', 'balloons status'])
      docs.push(JSON.parse(await output(CASES[k] as Case, 'json')));
    const text = JSON.stringify(docs);
    expect(text).not.toMatch(/:"-"/);
    const [, heads] = docs;
    expect(heads[0].perNode).toMatchObject({
      cpuMillicores: expect.any(Number),
      memoryBytes: expect.any(Number),
    });
    expect(heads[0].asOf).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});
