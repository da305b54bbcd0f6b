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
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';
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
  const args = [tsx, 'local/main.ts', '--once', '--clusters', '2', '--nodes', '4', '--state-dir', stateDir];
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

interface Opened {
  expected: number;
  drawn: { id: string; datasets: number; points: number }[];
  canvases: { id: string; width: number; height: number; painted: number }[];
  consoleErrors: string[];
  pageErrors: string[];
  requests: string[];
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
  return { expected: report ? report.expected : -1, drawn: report ? report.drawn : [], canvases };
})()`;

/** Opens the file in a fresh profile; every request other than the file itself is recorded and refused. */
async function open(browser: BrowserContext, file: string): Promise<Opened> {
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
  const state = (await page.evaluate(IN_PAGE)) as Pick<Opened, 'expected' | 'drawn' | 'canvases'>;
  await page.close();
  return { ...state, consoleErrors, pageErrors, requests };
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
    expect(story.slice(from + 1, from + 6)).toEqual([
      expect.stringMatching(
        /^ {2}policy "elastic" shrank the pool to its requests \+ 20%: elastic-1 offers /,
      ),
      expect.stringMatching(
        /^ {2}8 more batch pods arrived \(\d+ could not be scheduled\); the policy grew the pool: /,
      ),
      expect.stringMatching(/^ {2}explicit NodeResizeRequested: \S+ should offer 2 \/ 4Gi .* -> balloon /),
      '  explicit size 1 / 2Gi for elastic-1, below what its pods request:',
      expect.stringMatching(/^ {4}\S/),
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
    expectEveryChartDrawn(await open(browser, file), model);
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
