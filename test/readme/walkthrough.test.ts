/**
 * The README's walkthrough, executed: every command between its walkthrough markers runs, in order, as
 * an operator would type it (`npx fleetscope ...` is this repository's bin on Node 24; `export` lines
 * set the environment of the commands after them), in a directory where the quick start's
 * `npm start -- --once` has already run, as it has for a reader who followed the README from the top.
 * The simulator line runs in the background for the rest. Then the
 * walkthrough's claims are checked on what the commands left: recommendations, balloons, the feature
 * back on, a report with its charts. A command added to the README without working fails here.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';
import { fleetscope, LAUNCHER } from '../cli/bin.js';
import type { CliRun } from '../support/cli.js';

/** The quick start's `npm start -- --once`, with the project directory's default state (`.fleetscope`). */
async function quickStart(dir: string): Promise<void> {
  const tsx = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k.startsWith('FLEETSCOPE_')) delete env[k];
  await promisify(execFile)(
    process.execPath,
    // `npm start` runs in the checkout (its state server imports tsx from there): the state is named.
    [
      tsx,
      join(REPO_ROOT, 'local', 'main.ts'),
      '--once',
      '--clusters',
      '2',
      '--nodes',
      '3',
      '--state-dir',
      join(dir, '.fleetscope'),
    ],
    { cwd: REPO_ROOT, env, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 },
  );
}

const BEGIN = '<!-- walkthrough:begin -->';
const END = '<!-- walkthrough:end -->';

/** The walkthrough's commands: each line of each `sh` block between the markers, as argv. */
function walkthroughCommands(readme: string): string[][] {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error('README has no walkthrough markers');
  const section = readme.slice(start, end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks.flatMap((b) =>
    b
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'))
      .map(words),
  );
}

/** Shell words of a simple command line (single or double quotes, no expansions). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

function startSim(args: string[], cwd: string): Promise<ChildProcess> {
  const sim = spawn(LAUNCHER, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  sim.stdout?.on('data', (d) => {
    out += d;
  });
  sim.stderr?.on('data', (d) => {
    out += d;
  });
  const file = join(cwd, args[args.indexOf('--kubeconfig-out') + 1] ?? '');
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (existsSync(file) && out.length > 0) {
        clearInterval(timer);
        resolve(sim);
      }
    }, 100);
    sim.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`sim exited with ${code}: ${out}`));
    });
  });
}

describe('the README walkthrough', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  // `fleetscope ...`, on PATH after npm link: bin/fleetscope, as a reader runs it.
  const commands = walkthroughCommands(readme);
  const dir = mkdtempSync(join(tmpdir(), 'walkthrough-'));
  /** npm start's state: the default, `.fleetscope` in the project's directory. */
  const quickStartState = join(dir, '.fleetscope');
  const ran: { argv: string[]; run: CliRun }[] = [];
  const snapshots = new Map<string, CliRun>();
  let sim: ChildProcess | undefined;
  /** What the walkthrough's `export` lines set. */
  const env: Record<string, string> = {};
  const cli = (args: string[]) => fleetscope(args, { cwd: dir, env });

  beforeAll(async () => {
    await quickStart(dir);
    for (const argv of commands) {
      const exported = argv[0] === 'export' ? /^([A-Z_]+)=(.*)$/.exec(argv[1] ?? '') : null;
      if (exported) {
        env[exported[1]!] = exported[2]!;
        continue;
      }
      if (argv[0] !== 'fleetscope')
        throw new Error(`walkthrough line is not a fleetscope command: ${argv.join(' ')}`);
      const args = argv.slice(1);
      if (args[0] === 'sim') {
        sim = await startSim(args, dir);
        continue;
      }
      const run = await cli(args);
      ran.push({ argv, run });
      if (process.env.WALKTHROUGH_SHOW) console.log(`$ ${argv.join(' ')}\n${run.out}\n${run.err}`);
      // What the reader sees at this point, as JSON, for the checks below.
      if (argv.includes('status') || argv.includes('get') || argv.includes('list'))
        snapshots.set(args.join(' '), await cli([...args, '-o', 'json']));
      if (run.code !== 0) throw new Error(`"${argv.join(' ')}" exited ${run.code}:\n${run.out}\n${run.err}`);
    }
  }, 900_000);

  afterAll(() => {
    sim?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('is made of fleetscope commands that all ran and exited 0', () => {
    expect(commands.length).toBeGreaterThan(15);
    expect(sim).toBeDefined();
    expect(ran.map((r) => r.run.code)).toEqual(ran.map(() => 0));
  });

  /** What a command of the walkthrough showed when it ran, as JSON. */
  const again = (...prefix: string[]): CliRun => {
    const argv = commands.find((c) => prefix.every((p, i) => c[i + 1] === p));
    const shown = argv && snapshots.get(argv.slice(1).join(' '));
    if (!shown) throw new Error(`the walkthrough has no "fleetscope ${prefix.join(' ')}"`);
    return shown;
  };

  it('put both clusters in ClusterSet blue, each with its own ID', () => {
    const members: { clusterSet: string; cluster: string; clusterId: string }[] = JSON.parse(
      again('clusterset', 'list').out,
    );
    expect(members.map((m) => m.cluster).sort()).toEqual(['demo-1', 'demo-2']);
    expect(members.every((m) => m.clusterSet === 'blue')).toBe(true);
    expect(new Set(members.map((m) => m.clusterId)).size).toBe(2);
  });

  it('gave node-scoped recommendations that differ from node to node', async () => {
    const r = again('recommendations', 'get');
    expect(r.code).toBe(0);
    const targets = [...r.out.matchAll(/"cpuMillicores":\s*(\d+)/g)].map((m) => Number(m[1]));
    expect(new Set(targets).size).toBeGreaterThan(1);

    // What the walkthrough says of them: the busiest node's pod gets at least the DaemonSet-wide
    // target (which upstream VPA would give every pod), an idle node's pod less.
    type Rec = { target: { cpuMillicores: number } };
    const doc = JSON.parse(r.out) as {
      dsWide: Record<string, Rec>;
      nodes: Record<string, { containers: Record<string, Rec> }>;
    };
    for (const [container, wide] of Object.entries(doc.dsWide)) {
      const own = Object.values(doc.nodes).flatMap((n) => {
        const rec = n.containers[container];
        return rec ? [rec.target.cpuMillicores] : [];
      });
      expect(own.length).toBeGreaterThan(1);
      expect(Math.max(...own), container).toBeGreaterThanOrEqual(wide.target.cpuMillicores);
      expect(Math.min(...own), container).toBeLessThan(wide.target.cpuMillicores);
    }
  });

  it('inflated balloons on demo-1 under the policy, into free capacity only', () => {
    const status = JSON.parse(again('balloons', 'status').out);
    const nodes = status.clusters?.[0]?.nodes ?? status.nodes ?? [];
    expect(nodes.length).toBeGreaterThan(0);
    for (const n of nodes) {
      expect(n.pool).toBe('general');
      // Inflated past the 1m floor, and never into what workloads request.
      expect(n.balloon.cpuMillicores).toBeGreaterThan(1);
      expect(n.balloon.cpuMillicores + n.workloads.cpuMillicores).toBeLessThanOrEqual(
        n.allocatable.cpuMillicores,
      );
    }
  });

  it('showed balloons turning off task by task, and reversed it on request', async () => {
    const shown = JSON.parse(again('features', 'get').out);
    expect(shown).toMatchObject({ state: 'TurningOff', desired: 'off' });
    expect(shown.tasks[0].task).toBe('wait-for-uses');
    const now = JSON.parse(
      (await cli(['features', 'get', '--cluster', 'demo-1', '--feature', 'balloons', '-o', 'json'])).out,
    );
    expect(now.state).toBe('TurningOn');
    expect(now.transition.reason).toMatch(/reverses TurningOff/);
  });

  it("kept its own state: npm start's registrations stand, and registering over one says how to go on", async () => {
    expect(env.FLEETSCOPE_STATE_DIR).toBeDefined();
    const theirs = (args: string[]) => fleetscope(args, { cwd: dir, stateDir: quickStartState });
    const listed = JSON.parse((await theirs(['cluster', 'list', '-o', 'json'])).out);
    expect(listed.map((r: { cluster: { name: string } }) => r.cluster.name)).toEqual(['demo-1', 'demo-2']);
    expect(JSON.stringify(listed)).toContain('demo-kubeconfig.yaml');
    const again = await theirs(['cluster', 'register', '--name', 'demo-1', '--kubeconfig', 'sim.kubeconfig']);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/already registered in .*\.fleetscope .*demo-kubeconfig\.yaml/);
    expect(again.err).toMatch(/fleetscope cluster deregister --name demo-1/);
    expect(again.err).toMatch(/--state-dir DIR or FLEETSCOPE_STATE_DIR/);
  });

  it('wrote a self-contained report', () => {
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toMatch(/<canvas/);
    // Self-contained: no script, style, image or font fetched from anywhere.
    expect(html).not.toMatch(/(src|href)=["'](https?:)?\/\//);
    expect(html).not.toMatch(/url\(["']?(https?:)?\/\//);
  });
});
