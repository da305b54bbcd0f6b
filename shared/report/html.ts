/**
 * The report as ONE self-contained HTML file: layout and styles inline, Chart.js inline (its UMD build,
 * passed in), the model's charts as JSON. A Content-Security-Policy forbids every network fetch, so the
 * file shows the same on a laptop without network as in a browser behind a proxy.
 */

import { readableUsd } from '../kernel/units-format.js';
import { type ChartSpec, canvasHeight, chartsOf, daemonSetCharts, readable } from './charts.js';
import type { DaemonSetReport, FeatureCell, Pair, ReportModel } from './model.js';
import { PAGE_SCRIPT, PAGE_STYLE } from './page-assets.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const esc = (s: string | number): string => String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** JSON inside a <script> element: nothing in it may close the element or open a comment. */
const scriptJson = (v: unknown) =>
  JSON.stringify(v).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

const pair = (p: Pair) => `${readable('cpu', p.cpu)} CPU, ${readable('memory', p.memory)} memory`;

/**
 * What a change does, as a phrase: "saves 1.2 CPU (−30%)", "adds 256Mi memory (+12%)", "leaves CPU
 * unchanged". Against `base` (the figure it changes) for the percentage.
 */
export function changePhrase(r: 'cpu' | 'memory', delta: number, base: number): string {
  const what = r === 'cpu' ? 'CPU' : 'memory';
  if (readable(r, Math.abs(delta)) === readable(r, 0)) return `leaves ${what} unchanged`;
  const pct = base ? ` (${delta < 0 ? '−' : '+'}${Math.abs(Math.round((delta / base) * 100))}%)` : '';
  return `${delta < 0 ? 'saves' : 'adds'} ${readable(r, Math.abs(delta))} ${what}${pct}`;
}

/** A tile's class for a change: an increase warns, a saving is good. */
const changeClass = (delta: number) => (delta > 0 ? 'warn' : delta < 0 ? 'good' : '');

const canvas = (c: ChartSpec) =>
  `<figure class="chart ${c.kind}"><figcaption>${esc(c.title)}</figcaption><div class="canvas-box" style="height:${canvasHeight(c)}px"><canvas id="chart-${esc(c.id)}" data-chart="${esc(c.id)}" role="img" aria-label="${esc(c.title)}"></canvas></div></figure>`;

const empty = (why: string) => `<p class="empty">${esc(why)}</p>`;

function table(head: string[], rows: string[][], cls = ''): string {
  const th = head.map((h) => `<th>${esc(h)}</th>`).join('');
  const tr = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  return `<table class="${cls}"><thead><tr>${th}</tr></thead><tbody>${tr}</tbody></table>`;
}

function header(m: ReportModel): string {
  const s = m.summary;
  const tile = (value: string | number, label: string, cls = '', id = '') =>
    `<div class="tile ${cls}"${id ? ` data-headline="${id}"` : ''}><div class="value">${esc(value)}</div><div class="label">${esc(label)}</div></div>`;
  // The headline compares with what the pods request today (what the fleet pays now); the comparison
  // with a DaemonSet-wide VPA is a tile of its own, labelled as such.
  const today = (r: 'cpu' | 'memory') =>
    tile(
      `${readable(r, s.requestsToday[r])} → ${readable(r, s.recommended[r])}`,
      `${r === 'cpu' ? 'CPU' : 'memory'} requested today → with per-node targets: ${changePhrase(r, s.change[r], s.requestsToday[r])}`,
      changeClass(s.change[r]),
      `today-${r}`,
    );
  const vsWide = `${changePhrase('cpu', s.perNodeDelta.cpu, 0)}, ${changePhrase('memory', s.perNodeDelta.memory, 0)}`;
  return `<header>
  <div class="title"><h1>fleetscope fleet report</h1>
  <p class="meta">${m.scope ? `cluster <b>${esc(m.scope)}</b> · ` : ''}generated <time datetime="${esc(m.generatedAt)}">${esc(m.generatedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time></p></div>
  <div class="tiles">
    ${tile(`${s.reachable}/${s.clusters}`, 'clusters reachable')}
    ${tile(s.clusterSets, 'ClusterSets')}
    ${tile(s.nodeScopedDaemonSets, 'node-scoped DaemonSets')}
    ${today('cpu')}
    ${today('memory')}
    ${tile(vsWide, 'per-node sizing compared with a DaemonSet-wide VPA (one target for every pod), not with today', '', 'vs-ds-wide')}
    ${tile(s.balloonNodes, 'nodes with balloons')}
    ${tile(s.featuresMoving, 'feature transitions in progress', s.featuresMoving ? 'info' : '')}
    ${tile(s.featuresDangling, 'features Off with dangling state', s.featuresDangling ? 'bad' : 'good')}
  </div>
</header>`;
}

function clustersSection(m: ReportModel): string {
  if (m.clusters.length === 0) return '';
  const rows = m.clusters.map((c) => [
    `<b>${esc(c.name)}</b>`,
    c.reachable === undefined
      ? '<span class="pill">not inventoried</span>'
      : c.reachable
        ? '<span class="pill good">reachable</span>'
        : '<span class="pill bad">unreachable</span>',
    esc(c.version ?? '-'),
    esc(c.nodes ?? '-'),
    esc(c.metricsApi ?? '-'),
    esc(c.clusterSet ?? '-'),
  ]);
  return `<section id="clusters"><h2>Clusters</h2>${table(['cluster', 'status', 'version', 'nodes', 'metrics API', 'ClusterSet'], rows)}</section>`;
}

/** A label scope's groups (AEP-10031): what each scope value's nodes are sized from. */
function groupTable(ds: DaemonSetReport): string {
  if (!ds.groups?.length) return '';
  const rows = ds.groups.map((g) => [esc(g.label), esc(pair(g.target)), esc(g.nodes)]);
  return table(['group', 'target (per pod)', 'nodes sized from it'], rows);
}

/** Canary and revert: the rollout in words, and each revert with why and the sizes it took back. */
function rolloutPart(ds: DaemonSetReport): string {
  const r = ds.rollout;
  if (!r) return '';
  const line = `<p>Rollout (canary first, revert on harm): <b>${esc(r.phrase)}</b>.</p>`;
  if (r.reverts.length === 0) return line;
  const rows = r.reverts.map((e) => [
    esc(e.at),
    esc(e.node),
    esc(e.reason),
    esc(e.detail),
    esc(e.sizeChange),
  ]);
  return line + table(['reverted at', 'node', 'why', 'what was seen', 'taken back'], rows);
}

function daemonSetCard(ds: DaemonSetReport, i: number): string {
  const title = `<h3>${esc(ds.cluster)} · ${esc(ds.namespace)}/${esc(ds.name)} <span class="sub">VPA ${esc(ds.vpa)}, updateMode ${esc(ds.updateMode)}</span></h3>`;
  if (ds.empty) return `<article class="card">${title}${empty(ds.empty)}</article>`;
  const n = ds.nodes.length;
  const saves = `Over ${n} node${n === 1 ? '' : 's'}, the pods request ${esc(pair(ds.requestsTotal))} today and the per-node targets total ${esc(pair(ds.perNodeTotal))}: applying them <b>${esc(changePhrase('cpu', ds.change.cpu, ds.requestsTotal.cpu))}</b> and <b>${esc(changePhrase('memory', ds.change.memory, ds.requestsTotal.memory))}</b>. A DaemonSet-wide VPA (the same target for every pod) would need ${esc(pair(ds.dsWideTotal))}; per-node sizing ${esc(changePhrase('cpu', ds.delta.cpu, ds.dsWideTotal.cpu))} and ${esc(changePhrase('memory', ds.delta.memory, ds.dsWideTotal.memory))} against it. <span class="sub">As of ${esc(ds.asOf)}.</span>`;
  return `<article class="card">${title}<p>${saves}</p>${rolloutPart(ds)}${groupTable(ds)}<div class="charts two">${daemonSetCharts(ds, i).map(canvas).join('')}</div></article>`;
}

function nodescopeSection(m: ReportModel): string {
  const body = m.nodescope.empty
    ? empty(m.nodescope.empty)
    : m.nodescope.daemonSets.map(daemonSetCard).join('');
  return `<section id="nodescope"><h2>Node-scoped DaemonSets <span class="sub">KEP-4943</span></h2>
<p class="lead">One DaemonSet, very different nodes: each bar is a node's own target; the orange line is what upstream VPA would give every pod of the DaemonSet, the grey diamond what each node's pod requests today.</p>${body}</section>`;
}

function chartsSection(
  id: string,
  title: string,
  lead: string,
  why: string | undefined,
  charts: ChartSpec[],
  extra = '',
): string {
  const body = why ? empty(why) : `<div class="charts two">${charts.map(canvas).join('')}</div>${extra}`;
  return `<section id="${id}"><h2>${title}</h2><p class="lead">${lead}</p>${body}</section>`;
}

function requestsSection(m: ReportModel, charts: ChartSpec[]): string {
  const rows = m.requests.clusters.map((c) => [
    esc(c.cluster),
    esc(c.daemonSets),
    esc(pair(c.current)),
    esc(pair(c.recommended)),
  ]);
  return chartsSection(
    'requests',
    'Requests before and after, per cluster',
    "What the node-scoped DaemonSets' pods request today (each pod as it runs, resized or not) against their per-node recommendations.",
    m.requests.empty,
    charts.filter((c) => c.id.startsWith('requests-')),
    table(['cluster', 'DaemonSets', 'requests today', 'recommended'], rows),
  );
}

function balloonsSection(m: ReportModel, charts: ChartSpec[]): string {
  const notes = m.balloons.notes.length
    ? `<ul class="notes">${m.balloons.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>`
    : '';
  const blocked = m.balloons.pools.filter((p) => p.blockedNodes > 0);
  const priced = m.balloons.pools.filter((p) => p.balloonMonthlyUsd > 0);
  const money = priced.length
    ? `<p>Ballooned capacity at the nodes' prices: ${priced.map((p) => `${esc(p.cluster)} / ${esc(p.pool)} ${esc(readableUsd(p.balloonMonthlyUsd))}/month`).join(', ')}.</p>`
    : '';
  const extra =
    money +
    (blocked.length
      ? `<p class="warn-text">Reclaim blocked on ${blocked.map((p) => `${esc(p.blockedNodes)} node(s) of ${esc(p.cluster)} / ${esc(p.pool)}`).join(', ')}.</p>`
      : '');
  return chartsSection(
    'balloons',
    'Balloon capacity per node pool <span class="sub">KEP-5620</span>',
    'Allocatable capacity split into what workloads request, what is free, and what does not exist: held by balloon pods because the VM is smaller than the node says.',
    m.balloons.empty,
    charts.filter((c) => c.id.startsWith('balloons-')),
    extra + notes,
  );
}

function claimsSection(m: ReportModel, charts: ChartSpec[]): string {
  const sets = m.claims.sets
    .map(
      (s) =>
        `<div class="set"><h3>${esc(s.name)}</h3><ul>${s.members
          .map(
            (x) =>
              `<li><b>${esc(x.cluster)}</b> <code>${esc(x.clusterId)}</code>${x.since ? ` <span class="sub">since ${esc(x.since)}</span>` : ''}${x.pending ? ` <span class="pill info">${esc(x.pending)}</span>` : ''}</li>`,
          )
          .join('')}</ul></div>`,
    )
    .join('');
  const rows = m.claims.rows.map((r) => [
    esc(r.cluster),
    `<code>${esc(r.clusterId ?? '-')}</code>`,
    esc(r.clusterSet ?? '-') + (r.pending ? ` <span class="pill info">${esc(r.pending)}</span>` : ''),
    esc(r.customClaims.join(', ') || '-'),
    esc(r.sync ?? 'not written yet'),
  ]);
  const body = m.claims.empty
    ? empty(m.claims.empty)
    : `<div class="charts claims">${charts
        .filter((c) => c.id === 'clustersets')
        .map(canvas)
        .join(
          '',
        )}<div class="sets">${sets || empty('no ClusterSet has members')}</div></div>${table(['cluster', 'id.k8s.io', 'ClusterSet', 'custom claims', 'in-cluster'], rows)}`;
  return `<section id="claims"><h2>ClusterSets and claims <span class="sub">KEP-2149</span></h2>${body}</section>`;
}

function featureCellHtml(c: FeatureCell | undefined): string {
  if (!c) return '<span class="cell none">–</span>';
  const cls = c.dangling.length ? 'dangling' : c.moving ? 'moving' : c.state === 'On' ? 'on' : 'off';
  const detail = [
    c.moving
      ? `since ${c.moving.since}${c.moving.task ? `; next: ${c.moving.task}` : ''}${c.moving.waitingFor ? `; waiting for ${c.moving.waitingFor}` : ''}`
      : '',
    c.dangling.length ? `dangling: ${c.dangling.join('; ')}` : '',
  ]
    .filter(Boolean)
    .join(' — ');
  return `<span class="cell ${cls}" title="${esc(detail || `desired ${c.desired}`)}">${esc(c.state)}${c.dangling.length ? ' ⚠' : ''}</span>${detail ? `<div class="detail">${esc(detail)}</div>` : ''}`;
}

function featuresSection(m: ReportModel, charts: ChartSpec[]): string {
  const f = m.features;
  const cell = (cluster: string, feature: string) =>
    f.cells.find((c) => c.cluster === cluster && c.feature === feature);
  const matrix = table(
    ['cluster', ...f.features],
    f.clusters.map((cl) => [`<b>${esc(cl)}</b>`, ...f.features.map((ft) => featureCellHtml(cell(cl, ft)))]),
    'matrix',
  );
  const legend =
    '<p class="legend"><span class="cell on">On</span> <span class="cell off">Off</span> <span class="cell moving">transition in progress</span> <span class="cell dangling">Off with dangling state ⚠</span></p>';
  return chartsSection(
    'features',
    'Feature matrix <span class="sub">KEP-3920</span>',
    'Every capability is a feature of each cluster. Transitions in progress and Off features that still leave something behind are highlighted.',
    f.empty,
    charts.filter((c) => c.id === 'features'),
    legend + matrix,
  );
}

/** The whole page. `chartLibrary` is Chart.js's UMD source (chart-library.ts). */
export function renderReportHtml(m: ReportModel, chartLibrary: string): string {
  const charts = chartsOf(m);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>fleetscope report${m.scope ? ` · ${esc(m.scope)}` : ''} · ${esc(m.generatedAt)}</title>
<style>${PAGE_STYLE}</style></head>
<body>
${header(m)}
<main>
${clustersSection(m)}
${nodescopeSection(m)}
${requestsSection(m, charts)}
${balloonsSection(m, charts)}
${claimsSection(m, charts)}
${featuresSection(m, charts)}
</main>
<footer>fleetscope · read from the fleetscope table only; no cluster was contacted to draw this page</footer>
<script id="report-charts" type="application/json">${scriptJson(charts)}</script>
<script>${chartLibrary.replace(/<\/script/gi, '<\\/script')}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
