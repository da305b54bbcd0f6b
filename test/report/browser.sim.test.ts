/**
 * The report as people see it: a demo fleet runs one cycle on the simulator (`npm start -- --once`:
 * node-scoped DaemonSets with VPAs, a balloon policy, ClusterSets, features turning on), then
 * `fleetscope report` writes the HTML, and headless Chromium opens it with the network cut off.
 * Every chart the model calls for must be drawn (pixels on its canvas, its datasets laid out), with no
 * console error, no page error and no request leaving the file. The scheduled report the cycle wrote
 * into the state directory (the local ReportSink) is opened the same way.
 *
 * Chromium is the Debian package (/usr/bin/chromium, or CHROMIUM_PATH); .ci/run installs it. Without it a
 * developer's run skips this with a one-line notice; under CI=true its absence fails the run: a report
 * nobody checked renders is not a tested report.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';
import { readableCpu, readableMemory } from '../../shared/kernel/units-format.js';
import { chartsOf } from '../../shared/report/charts.js';
import type { ReportModel } from '../../shared/report/model.js';
import { runFleetscope } from '../support/cli.js';
import { describeNeeding, executableNeed } from '../support/needs-tool.js';

const CHROMIUM_NEED = executableNeed(
  'Chromium',
  [process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'],
  existsSync,
  'apt-get install -y chromium (.ci/run does) or set CHROMIUM_PATH',
);
const CHROMIUM = CHROMIUM_NEED.path as string;
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `npm start -- --once` on its own state directory: the demo fleet's first cycle, then exit. */
function runDemoCycle(stateDir: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
  const tsx = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  // Ten nodes: enough node names that rotated labels once squeezed the per-node plots to a strip.
  const args = [tsx, 'local/main.ts', '--once', '--clusters', '2', '--nodes', '10', '--state-dir', stateDir];
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      args,
      { cwd: REPO_ROOT, env, timeout: 150_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`npm start --once failed: ${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

interface Drawn {
  id: string;
  datasets: number;
  points: number;
  /** The chart's plot area (pixels) and the values its value axis ticks at. */
  plot: { width: number; height: number };
  ticks: number[];
}

interface Opened {
  expected: number;
  drawn: Drawn[];
  canvases: { id: string; width: number; height: number; painted: number }[];
  consoleErrors: string[];
  pageErrors: string[];
  requests: string[];
  /** What the page shows as text: the headline tiles, the requests table's rows. */
  headline: Record<string, { value: string; label: string }>;
  tiles: { height: number; needs: number }[];
  requestRows: string[][];
  /** Screenshots taken (header and each section), when asked for. */
  shots: string[];
}

/**
 * Run in the page (a string: this project type-checks against Node, not the DOM): what the page's
 * script says it drew, and how many pixels of each canvas are painted.
 */
const IN_PAGE = `(() => {
  const report = window.fleetscopeReport;
  const canvases = [...document.querySelectorAll('canvas')].map((c) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let painted = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) painted++;
    return { id: c.id, width: c.width, height: c.height, painted };
  });
  const headline = {};
  document.querySelectorAll('[data-headline]').forEach((t) => {
    headline[t.getAttribute('data-headline')] = {
      value: t.querySelector('.value').textContent,
      label: t.querySelector('.label').textContent,
    };
  });
  // Each headline tile's height beside what its content needs (value, label, padding and border).
  const tiles = [...document.querySelectorAll('.tile')].map((t) => {
    const css = getComputedStyle(t);
    const box = ['paddingTop', 'paddingBottom', 'borderTopWidth', 'borderBottomWidth']
      .map((k) => parseFloat(css[k])).reduce((a, b) => a + b, 0);
    const content = [...t.children].reduce((a, c) => a + c.getBoundingClientRect().height, 0);
    return { height: t.getBoundingClientRect().height, needs: content + box };
  });
  const requestRows = [...document.querySelectorAll('#requests tbody tr')].map((tr) =>
    [...tr.querySelectorAll('td')].map((td) => td.textContent),
  );
  return {
    expected: report ? report.expected : -1,
    drawn: report ? report.drawn : [],
    canvases,
    headline,
    tiles,
    requestRows,
  };
})()`;

/**
 * Opens the file in a fresh profile; every request other than the file itself is recorded and refused.
 * With `shots`, screenshots of the header and of each section go there (look at them: a DOM that
 * checks out can still draw an unreadable plot).
 */
async function open(browser: BrowserContext, file: string, shots?: string): Promise<Opened> {
  const page = await browser.newPage();
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url === `file://${file}`) return route.continue();
    requests.push(url);
    return route.abort();
  });
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  const state = (await page.evaluate(IN_PAGE)) as Omit<
    Opened,
    'consoleErrors' | 'pageErrors' | 'requests' | 'shots'
  >;
  const taken: string[] = [];
  if (shots) {
    mkdirSync(shots, { recursive: true });
    for (const part of ['header', ...SECTIONS.map((id) => `section#${id}`)]) {
      const path = join(shots, `${part.replace(/^section#/, '')}.png`);
      await page.locator(part).screenshot({ path });
      taken.push(path);
    }
  }
  await page.close();
  return { ...state, consoleErrors, pageErrors, requests, shots: taken };
}

const SECTIONS = ['clusters', 'nodescope', 'requests', 'balloons', 'claims', 'features'];

/** Where the screenshots of the full report go (FLEETSCOPE_REPORT_SHOTS, else a temporary directory). */
const SHOTS = process.env.FLEETSCOPE_REPORT_SHOTS ?? join(tmpdir(), 'fleetscope-report-screenshots');

/** Readable plots: a plot area people can read, and counts that tick on whole numbers only. */
function expectReadablePlots(opened: Opened, model: ReportModel) {
  const units = new Map(chartsOf(model).map((c) => [c.id, c]));
  for (const d of opened.drawn) {
    const spec = units.get(d.id);
    if (spec?.kind !== 'bar') continue;
    expect(d.plot.height, `${d.id}: plot height`).toBeGreaterThanOrEqual(150);
    expect(d.plot.width, `${d.id}: plot width`).toBeGreaterThanOrEqual(250);
    if (spec.horizontal)
      expect(d.plot.height / spec.labels.length, `${d.id}: pixels per row`).toBeGreaterThanOrEqual(14);
    if (spec.unit === 'count') {
      expect(d.ticks.length, `${d.id}: ticks`).toBeGreaterThan(1);
      for (const t of d.ticks) expect(Number.isInteger(t), `${d.id}: tick ${t} on a count`).toBe(true);
    }
  }
}

function expectEveryChartDrawn(opened: Opened, model: ReportModel) {
  const ids = chartsOf(model).map((c) => c.id);
  expect(opened.pageErrors).toEqual([]);
  expect(opened.consoleErrors).toEqual([]);
  expect(opened.requests).toEqual([]);
  expect(opened.expected).toBe(ids.length);
  expect(opened.drawn.map((d) => d.id)).toEqual(ids);
  expect(opened.canvases.map((c) => c.id)).toEqual(ids.map((id) => `chart-${id}`));
  for (const d of opened.drawn) {
    expect(d.datasets, `${d.id}: datasets laid out`).toBeGreaterThan(0);
    expect(d.points, `${d.id}: bars, points or arcs laid out`).toBeGreaterThan(0);
  }
  for (const c of opened.canvases) {
    expect(c.width * c.height, `${c.id}: canvas size`).toBeGreaterThan(10_000);
    // Axes and legends alone paint a few percent; bars and arcs much more. Blank is 0.
    expect(c.painted / (c.width * c.height), `${c.id}: painted share`).toBeGreaterThan(0.02);
  }
}

describeNeeding(CHROMIUM_NEED, 'the fleet report in a browser', () => {
  let stateDir: string;
  let profile: string;
  let browser: BrowserContext;
  /** What `npm start -- --once` printed. */
  let started: string;

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'fleetscope-report-'));
    profile = mkdtempSync(join(tmpdir(), 'fleetscope-chromium-'));
    started = await runDemoCycle(stateDir);
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      offline: true,
      viewport: { width: 1280, height: 900 },
    });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    for (const d of [stateDir, profile]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('npm start --once tells the balloons story after the first cycle, act by act', () => {
    const story = started.split('\n');
    const from = story.indexOf('balloons demo (demo-1):');
    expect(from).toBeGreaterThanOrEqual(0);
    expect(story.slice(from + 1, from + 8)).toEqual([
      expect.stringMatching(
        /^ {2}policy "elastic" shrank the pool to its requests \+ 20%: elastic-1 offers /,
      ),
      expect.stringMatching(
        /^ {2}a resize of netd-\S+ on elastic-\d to \d+m, more than the node has free \(the demo's own request, not node scope's target\): Deferred by the kubelet; the minute's grow pass deflated the balloon .*; the resize completed \(\d+m\); pods preempted or evicted: 0$/,
      ),
      expect.stringMatching(
        /^ {2}8 more batch pods arrived \(\d+ could not be scheduled\); the policy grew the pool: /,
      ),
      expect.stringMatching(
        /^ {2}explicit NodeResizeRequested: \S+ should offer 2 cores \/ 4Gi .* -> balloon /,
      ),
      '  explicit size 1 core / 2Gi for elastic-1, below what its pods request:',
      expect.stringMatching(/^ {4}\S/),
      expect.stringMatching(/^ {2}the pool now \(the balloons table above\): elastic-1 offers /),
    ]);
  });

  it('draws every chart of `fleetscope report --out`, offline, without an error', async () => {
    const json = await runFleetscope(['report', '-o', 'json'], { stateDir });
    expect(json.err).toBe('');
    const model = JSON.parse(json.out) as ReportModel;
    // The demo fleet fills every section: nothing here is drawn from an empty model.
    expect(model.summary).toMatchObject({ clusters: 2, reachable: 2, clusterSets: 2 });
    for (const s of [model.nodescope, model.requests, model.balloons, model.claims, model.features])
      expect(s.empty).toBeUndefined();
    expect(model.nodescope.daemonSets.every((d) => d.nodes.length > 0)).toBe(true);
    expect(model.balloons.pools.some((p) => p.balloon.cpu > 0)).toBe(true);
    expect(model.features.cells.some((c) => c.moving)).toBe(true);

    const file = join(stateDir, 'fleet.html');
    const run = await runFleetscope(['report', '--out', file], { stateDir });
    expect(run.err).toBe('');
    expect(run.out).toMatch(
      new RegExp(
        `wrote ${file}: 2 cluster\\(s\\), 3 node-scoped DaemonSet\\(s\\), ${chartsOf(model).length} chart\\(s\\)`,
      ),
    );
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('Chart.js v4');
    expect(html).toContain('class="cell moving"');
    const opened = await open(browser, file, SHOTS);
    expectEveryChartDrawn(opened, model);
    expectReadablePlots(opened, model);
    for (const shot of opened.shots) expect(statSync(shot).size, shot).toBeGreaterThan(2_000);
    // Ten nodes per DaemonSet: the per-node charts lay their node names out across, one row each.
    expect(
      chartsOf(model)
        .filter((c) => c.id.startsWith('ds-'))
        .every((c) => c.horizontal),
    ).toBe(true);
    expect(model.balloons.pools.some((p) => p.pool === 'unmanaged')).toBe(false);

    // The headline compares with what the pods request today: the requests table's own totals.
    const rows = model.requests.clusters;
    const sum = (pick: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + pick(r), 0);
    expect(model.summary.requestsToday).toEqual({
      cpu: sum((r) => r.current.cpu),
      memory: sum((r) => r.current.memory),
    });
    expect(model.summary.recommended).toEqual({
      cpu: sum((r) => r.recommended.cpu),
      memory: sum((r) => r.recommended.memory),
    });
    const { cpu, memory } = model.summary.requestsToday;
    expect(opened.headline['today-cpu']?.value).toBe(
      `${readableCpu(cpu)} → ${readableCpu(model.summary.recommended.cpu)}`,
    );
    expect(opened.headline['today-memory']?.value).toBe(
      `${readableMemory(memory)} → ${readableMemory(model.summary.recommended.memory)}`,
    );
    const verb = (d: number) => (d > 0 ? /adds/ : d < 0 ? /saves/ : /unchanged/);
    expect(opened.headline['today-cpu']?.label).toMatch(verb(model.summary.change.cpu));
    expect(opened.headline['vs-ds-wide']?.label).toMatch(/DaemonSet-wide VPA/);
    // A tile is as tall as what it holds (a grid row once stretched them to twice that).
    expect(opened.tiles.length).toBeGreaterThan(3);
    for (const t of opened.tiles) expect(t.height).toBeLessThanOrEqual(t.needs + 2);
    // The table the headline sums shows the same figures, cluster by cluster.
    expect(opened.requestRows.map((r) => [r[0], r[2], r[3]])).toEqual(
      rows.map((r) => [
        r.cluster,
        `${readableCpu(r.current.cpu)} CPU, ${readableMemory(r.current.memory)} memory`,
        `${readableCpu(r.recommended.cpu)} CPU, ${readableMemory(r.recommended.memory)} memory`,
      ]),
    );
    expect(html).not.toMatch(/it <b>(unchanged|saves|adds)/);
  });

  it('draws the one-cluster report, and refuses an unknown cluster in one line', async () => {
    const json = await runFleetscope(['report', '--cluster', 'demo-2', '-o', 'json'], { stateDir });
    const model = JSON.parse(json.out) as ReportModel;
    expect(model.scope).toBe('demo-2');
    expect(model.clusters.map((c) => c.name)).toEqual(['demo-2']);
    const file = join(stateDir, 'demo-2.html');
    expect((await runFleetscope(['report', '--cluster', 'demo-2', '--out', file], { stateDir })).code).toBe(
      0,
    );
    expectEveryChartDrawn(await open(browser, file), model);
    const unknown = await runFleetscope(['report', '--cluster', 'nope', '--out', file], { stateDir });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe(
      'fleetscope report: cluster "nope" is not registered (fleetscope cluster list shows those that are)',
    );
  });

  it('draws the scheduled report the cycle wrote into the state directory (the local ReportSink)', async () => {
    const file = join(stateDir, 'reports', 'latest.html');
    expect(existsSync(file)).toBe(true);
    const html = readFileSync(file, 'utf8');
    const charts = JSON.parse(
      /<script id="report-charts" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!,
    ) as unknown[];
    expect(charts.length).toBeGreaterThan(0);
    const opened = await open(browser, file);
    expect(opened.pageErrors).toEqual([]);
    expect(opened.consoleErrors).toEqual([]);
    expect(opened.requests).toEqual([]);
    expect(opened.drawn).toHaveLength(charts.length);
    for (const c of opened.canvases) expect(c.painted, c.id).toBeGreaterThan(0);
  });
});
