/**
 * Monthly AWS cost of running nodescope on one cluster at the default schedule, from measured cycles.
 * Published on-demand prices, us-east-1 (no free tier counted).
 */

export const PRICES = {
  /** DynamoDB on-demand (Standard table class), https://aws.amazon.com/dynamodb/pricing/on-demand/ */
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  dynamoStorageGbMonth: 0.25,
  /** Lambda arm64 (the stack deploys ARM_64), https://aws.amazon.com/lambda/pricing/ */
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  /** EventBridge custom events and Scheduler invocations, https://aws.amazon.com/eventbridge/pricing/ */
  eventBridgeEvent: 1 / 1e6,
  schedulerInvocation: 1 / 1e6,
  /** CloudWatch Logs ingestion and custom metrics, https://aws.amazon.com/cloudwatch/pricing/ */
  logsIngestGb: 0.5,
  customMetricMonth: 0.3,
  /** Secrets Manager API calls, https://aws.amazon.com/secrets-manager/pricing/ */
  secretsApiCall: 0.05 / 10_000,
} as const;

export const HOURS_PER_MONTH = 730;

/** One DaemonSet's measured DynamoDB use: in the cycle it folded, and per cycle it appended. */
export interface DaemonSetUse {
  name: string;
  foldWriteUnits: number;
  appendWriteUnits: number;
  /** Read units of a cycle with no pending log entry, and of one more pending entry. */
  baseReadUnits: number;
  logReadUnits: number;
}

export interface CostInput {
  periodMinutes: number;
  foldEveryMinutes: number;
  lambdaMemoryMb: number;
  daemonSets: DaemonSetUse[];
  /** Per cycle, outside the DaemonSets: the cluster record, the heads' query. */
  cycleWriteUnits: number;
  cycleReadUnits: number;
  /** Mean wall-clock seconds of an invocation (what Lambda bills). */
  wallSeconds: number;
  /** Events per cycle at steady state (ClusterWorkRequested, NodeScopeCycleCompleted). */
  eventsPerCycle: number;
  bytesStored: number;
  /** Log lines per invocation (Powertools, JSON). */
  logBytesPerInvocation: number;
  /** Custom metrics the function publishes (EMF; dimension: function, so shared by the whole fleet). */
  customMetrics: number;
  nodes: number;
}

export interface CostLine {
  item: string;
  arithmetic: string;
  dollars: number;
  /** Charged per cluster (grows with clusters and nodes), or once for the fleet. */
  scope: 'cluster' | 'fleet';
}

const fmt = (n: number, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;

export function monthlyCost(c: CostInput): {
  lines: CostLine[];
  cluster: number;
  fleet: number;
  perThousandNodes: number;
} {
  const cyclesPerHour = 60 / c.periodMinutes;
  const foldsPerHour = 60 / c.foldEveryMinutes;
  const appendsPerHour = cyclesPerHour - foldsPerHour;
  const cyclesPerMonth = cyclesPerHour * HOURS_PER_MONTH;
  // Between two folds a DaemonSet's cycles read 0, 1, ... appendsPerHour pending log entries.
  const meanPending = appendsPerHour / 2;
  const sum = (f: (d: DaemonSetUse) => number) => c.daemonSets.reduce((a, d) => a + f(d), 0);
  const foldWru = sum((d) => d.foldWriteUnits);
  const appendWru = sum((d) => d.appendWriteUnits);
  const baseRru = sum((d) => d.baseReadUnits);
  const logRru = sum((d) => d.logReadUnits);
  const wruPerHour = foldsPerHour * foldWru + appendsPerHour * appendWru + cyclesPerHour * c.cycleWriteUnits;
  const rruPerHour = cyclesPerHour * (baseRru + meanPending * logRru + c.cycleReadUnits);
  const wru = wruPerHour * HOURS_PER_MONTH;
  const rru = rruPerHour * HOURS_PER_MONTH;
  const gbs = cyclesPerMonth * c.wallSeconds * (c.lambdaMemoryMb / 1024);
  const events = cyclesPerMonth * c.eventsPerCycle;
  const storageGb = c.bytesStored / 1e9;
  const logsGb = (cyclesPerMonth * c.logBytesPerInvocation) / 1e9;
  const lines: CostLine[] = [
    {
      item: 'DynamoDB writes',
      arithmetic: `(${fmt(foldsPerHour)} fold of each DaemonSet ${fmt(foldWru)} + ${fmt(appendsPerHour)} appends x ${fmt(appendWru)} + ${fmt(cyclesPerHour)} cycles x ${fmt(c.cycleWriteUnits)}) = ${fmt(wruPerHour)} WRU/h x ${HOURS_PER_MONTH} h = ${fmt(wru / 1e6, 2)}M WRU x $0.625/M`,
      dollars: wru * PRICES.dynamoWriteUnit,
      scope: 'cluster',
    },
    {
      item: 'DynamoDB reads',
      arithmetic: `${fmt(cyclesPerHour)} cycles x (bases ${fmt(baseRru, 1)} + ${fmt(meanPending, 1)} mean pending logs x ${fmt(logRru, 1)} + ${fmt(c.cycleReadUnits, 1)}) = ${fmt(rruPerHour)} RRU/h x ${HOURS_PER_MONTH} h = ${fmt(rru / 1e6, 2)}M RRU x $0.125/M`,
      dollars: rru * PRICES.dynamoReadUnit,
      scope: 'cluster',
    },
    {
      item: 'DynamoDB idempotency records',
      arithmetic: `${fmt(cyclesPerMonth)} events x 2 WRU x $0.625/M`,
      dollars: cyclesPerMonth * 2 * PRICES.dynamoWriteUnit,
      scope: 'cluster',
    },
    {
      item: 'DynamoDB storage',
      arithmetic: `${fmt(storageGb, 4)} GB x $0.25/GB-month`,
      dollars: storageGb * PRICES.dynamoStorageGbMonth,
      scope: 'cluster',
    },
    {
      item: 'Lambda duration (arm64)',
      arithmetic: `${fmt(cyclesPerMonth)} x ${fmt(c.wallSeconds, 1)} s x ${fmt(c.lambdaMemoryMb / 1024, 3)} GB = ${fmt(gbs)} GB-s x $0.0000133334`,
      dollars: gbs * PRICES.lambdaGbSecond,
      scope: 'cluster',
    },
    {
      item: 'Lambda requests',
      arithmetic: `${fmt(cyclesPerMonth)} invocations x $0.20/M`,
      dollars: cyclesPerMonth * PRICES.lambdaRequest,
      scope: 'cluster',
    },
    {
      item: 'EventBridge events',
      arithmetic: `${fmt(events)} (ClusterWorkRequested + NodeScopeCycleCompleted per cycle) x $1/M`,
      dollars: events * PRICES.eventBridgeEvent,
      scope: 'cluster',
    },
    {
      item: 'CloudWatch Logs',
      arithmetic: `${fmt(cyclesPerMonth)} x ${fmt(c.logBytesPerInvocation)} B = ${fmt(logsGb, 3)} GB x $0.50/GB`,
      dollars: logsGb * PRICES.logsIngestGb,
      scope: 'cluster',
    },
    {
      item: 'Secrets Manager reads',
      arithmetic: `<= ${fmt(cyclesPerMonth)} GetSecretValue (kubeconfig TTL 5 min) x $0.05/10k`,
      dollars: cyclesPerMonth * PRICES.secretsApiCall,
      scope: 'cluster',
    },
    {
      item: 'Scheduler + dispatch',
      arithmetic: `${fmt(cyclesPerMonth)} schedule invocations x $1/M + dispatch Lambda x $0.20/M`,
      dollars: cyclesPerMonth * (PRICES.schedulerInvocation + PRICES.lambdaRequest),
      scope: 'fleet',
    },
    {
      item: 'CloudWatch custom metrics',
      arithmetic: `${c.customMetrics} EMF metrics (dimension: function, not cluster) x $0.30`,
      dollars: c.customMetrics * PRICES.customMetricMonth,
      scope: 'fleet',
    },
  ];
  const cluster = lines.filter((l) => l.scope === 'cluster').reduce((a, l) => a + l.dollars, 0);
  const fleet = lines.filter((l) => l.scope === 'fleet').reduce((a, l) => a + l.dollars, 0);
  return { lines, cluster, fleet, perThousandNodes: (cluster / c.nodes) * 1000 };
}

export function formatCost(r: ReturnType<typeof monthlyCost>): string[] {
  const w = Math.max(...r.lines.map((l) => l.item.length));
  return r.lines.map(
    (l) =>
      `    ${l.item.padEnd(w)}  ${usd(l.dollars).padStart(9)}  ${l.arithmetic}${l.scope === 'fleet' ? '  [once for the whole fleet]' : ''}`,
  );
}
