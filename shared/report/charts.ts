/**
 * The charts of the report, as data: one ChartSpec per canvas, derived from the model alone (pure), so
 * the number of charts a report must show is known without a browser. Values are in cores and GiB (the
 * axes' units); `readable` carries the same values as people read them (250m, 1.5Gi) for tooltips.
 */
import { readableCpu, readableMemory } from '../kernel/units-format.js';
import type { DaemonSetReport, Pair, ReportModel } from './model.js';

export type ChartUnit = 'cpu' | 'memory' | 'count';

export interface ChartDataset {
  label: string;
  data: number[];
  readable: string[];
  color: string;
  /** Drawn as a line over the bars (a reference level, such as the DaemonSet-wide target). */
  line?: boolean;
  /** A dashed line. */
  dashed?: boolean;
  /**
   * A marker per category, not joined (what each node's pod requests today): a line from one node to
   * the next would draw a slope across nodes that have nothing between them.
   */
  marker?: boolean;
}

export interface ChartSpec {
  id: string;
  title: string;
  kind: 'bar' | 'doughnut';
  unit: ChartUnit;
  labels: string[];
  datasets: ChartDataset[];
  stacked?: boolean;
  /**
   * Bars run across and the labels (node names, pools) read level on the left, one row each: rotated
   * names squeezed the plot to a strip. The canvas grows with the rows (canvasHeight).
   */
  horizontal?: boolean;
}

/** Rows of a horizontal chart get this many pixels each, beside room for the axis and the legend. */
const ROW_PX = 30;
const MIN_HEIGHT = 240;

/** The canvas height a chart needs to stay readable (its plot area, legend and axis). */
export function canvasHeight(c: ChartSpec): number {
  if (c.kind === 'doughnut') return MIN_HEIGHT;
  if (!c.horizontal) return 280;
  return Math.max(280, 150 + ROW_PX * c.labels.length);
}

/** Bars across when the labels would not fit under the bars level: many of them, or long ones. */
const acrossWhen = (labels: string[]) => labels.length > 6 || labels.some((l) => l.length > 14);

export const COLORS = {
  perNode: '#2563eb',
  fallback: '#93c5fd',
  dsWide: '#f97316',
  current: '#64748b',
  recommended: '#16a34a',
  workloads: '#2563eb',
  free: '#a3e635',
  balloon: '#cbd5e1',
  on: '#16a34a',
  off: '#94a3b8',
  turningOn: '#0ea5e9',
  turningOff: '#f59e0b',
} as const;

const RESOURCES = ['cpu', 'memory'] as const;
type Resource = (typeof RESOURCES)[number];

/** The axis value: cores, or GiB. */
export const axisValue = (r: Resource, v: number): number =>
  r === 'cpu' ? Math.round(v) / 1000 : Math.round((v / 2 ** 30) * 1000) / 1000;
export const readable = (r: Resource, v: number): string =>
  r === 'cpu' ? readableCpu(Math.round(v)) : readableMemory(Math.round(v));

function dataset(
  label: string,
  r: Resource,
  values: number[],
  color: string,
  style: { line?: boolean; dashed?: boolean; marker?: boolean } = {},
): ChartDataset {
  return {
    label,
    data: values.map((v) => axisValue(r, v)),
    readable: values.map((v) => readable(r, v)),
    color,
    ...(style.line ? { line: true } : {}),
    ...(style.dashed ? { dashed: true } : {}),
    ...(style.marker ? { marker: true } : {}),
  };
}

const resourceTitle = (r: Resource) => (r === 'cpu' ? 'CPU' : 'memory');

/** Where a node's target comes from when not its own history: its group (AEP-10031), or the fallback. */
function sourceNote(n: DaemonSetReport['nodes'][number]): string {
  if (n.source === 'fallback') return ' (fallback)';
  if (n.source === 'group') return ` (group ${n.groupLabel ?? (n.group === '' ? '""' : (n.group ?? ''))})`;
  return '';
}

/** The charts of one DaemonSet's card: its nodes' targets, the DaemonSet-wide one, today's requests. */
export function daemonSetCharts(ds: DaemonSetReport, index: number): ChartSpec[] {
  if (ds.nodes.length === 0) return [];
  const labels = ds.nodes.map((n) => `${n.node}${sourceNote(n)}`);
  return RESOURCES.map((r) => ({
    id: `ds-${index}-${r}`,
    title: `${resourceTitle(r)} target per node`,
    kind: 'bar' as const,
    unit: r,
    labels,
    ...(acrossWhen(labels) ? { horizontal: true } : {}),
    datasets: [
      dataset(
        'per-node target',
        r,
        ds.nodes.map((n) => n.target[r]),
        COLORS.perNode,
      ),
      dataset(
        'DaemonSet-wide target',
        r,
        ds.nodes.map(() => ds.dsWide[r]),
        COLORS.dsWide,
        { line: true },
      ),
      dataset(
        "pod's requests today",
        r,
        ds.nodes.map((n) => n.requests[r]),
        COLORS.current,
        { marker: true },
      ),
    ],
  }));
}

function requestCharts(m: ReportModel): ChartSpec[] {
  const rows = m.requests.clusters;
  if (rows.length === 0) return [];
  return RESOURCES.map((r) => ({
    id: `requests-${r}`,
    title: `${resourceTitle(r)} requests: today vs recommended`,
    kind: 'bar' as const,
    unit: r,
    labels: rows.map((c) => c.cluster),
    datasets: [
      dataset(
        'requests today',
        r,
        rows.map((c) => c.current[r]),
        COLORS.current,
      ),
      dataset(
        'recommended',
        r,
        rows.map((c) => c.recommended[r]),
        COLORS.recommended,
      ),
    ],
  }));
}

function balloonCharts(m: ReportModel): ChartSpec[] {
  const pools = m.balloons.pools;
  if (pools.length === 0) return [];
  const of = (r: Resource, pick: (p: (typeof pools)[number]) => Pair) => pools.map((p) => pick(p)[r]);
  const labels = pools.map((p) => `${p.cluster} / ${p.pool} (${p.nodes} node${p.nodes === 1 ? '' : 's'})`);
  return RESOURCES.map((r) => ({
    id: `balloons-${r}`,
    title: `${resourceTitle(r)} per node pool`,
    kind: 'bar' as const,
    unit: r,
    stacked: true,
    labels,
    ...(acrossWhen(labels) ? { horizontal: true } : {}),
    datasets: [
      dataset(
        'used by workloads (requests)',
        r,
        of(r, (p) => p.workloads),
        COLORS.workloads,
      ),
      dataset(
        'free',
        r,
        of(r, (p) => p.free),
        COLORS.free,
      ),
      dataset(
        "doesn't exist (held by balloons)",
        r,
        of(r, (p) => p.balloon),
        COLORS.balloon,
      ),
    ],
  }));
}

const counts = (label: string, data: number[], color: string): ChartDataset => ({
  label,
  data,
  readable: data.map(String),
  color,
});

function claimsCharts(m: ReportModel): ChartSpec[] {
  if (m.claims.rows.length === 0) return [];
  const outside = m.claims.rows.filter((r) => !r.clusterSet && !r.pending).length;
  const labels = [...m.claims.sets.map((s) => s.name), ...(outside ? ['(no ClusterSet)'] : [])];
  const data = [...m.claims.sets.map((s) => s.members.length), ...(outside ? [outside] : [])];
  return [
    {
      id: 'clustersets',
      title: 'Clusters per ClusterSet',
      kind: 'doughnut',
      unit: 'count',
      labels,
      datasets: [{ ...counts('clusters', data, COLORS.perNode), color: 'palette' }],
    },
  ];
}

function featureCharts(m: ReportModel): ChartSpec[] {
  const f = m.features;
  if (f.cells.length === 0) return [];
  const count = (feature: string, state: string) =>
    f.cells.filter((c) => c.feature === feature && c.state === state).length;
  const states = [
    ['On', COLORS.on],
    ['TurningOn', COLORS.turningOn],
    ['TurningOff', COLORS.turningOff],
    ['Off', COLORS.off],
  ] as const;
  return [
    {
      id: 'features',
      title: 'Clusters per feature state',
      kind: 'bar',
      unit: 'count',
      stacked: true,
      labels: f.features,
      datasets: states.map(([s, color]) =>
        counts(
          s,
          f.features.map((x) => count(x, s)),
          color,
        ),
      ),
    },
  ];
}

/** Every chart of the report, in page order. */
export function chartsOf(m: ReportModel): ChartSpec[] {
  return [
    ...m.nodescope.daemonSets.flatMap(daemonSetCharts),
    ...requestCharts(m),
    ...balloonCharts(m),
    ...claimsCharts(m),
    ...featureCharts(m),
  ];
}
