/**
 * The upstream VerticalPodAutoscalerCheckpoint object (autoscaling.k8s.io/v1, spec §2.1), in the JSON
 * form the recommender writes: encoding/json of the Go structs, so zero-valued `omitempty` fields
 * (totalWeight 0, no bucketWeights, totalSamplesCount 0) are left out and zero times are null.
 * metav1.Time has second precision, so a checkpoint drops sub-second parts of every timestamp.
 */
import { formatMetaTime, type GoTime, parseRfc3339, ZERO_TIME } from '../gotime.js';
import type { CheckpointStatusData } from '../model/aggregate.js';
import type { DecayingHistogramCheckpointData } from '../model/decaying-histogram.js';
import { CheckpointError } from '../model/histogram.js';

export interface HistogramCheckpoint {
  referenceTimestamp: string | null;
  /** Bucket index (decimal string) → weight, the largest being 10000. Omitted when empty. */
  bucketWeights?: Record<string, number>;
  /** The exact float total. Omitted when 0. */
  totalWeight?: number;
}

export interface VerticalPodAutoscalerCheckpointStatus {
  lastUpdateTime: string | null;
  version?: string;
  cpuHistogram: HistogramCheckpoint;
  memoryHistogram: HistogramCheckpoint;
  firstSampleStart: string | null;
  lastSampleStart: string | null;
  /** Omitted when 0. */
  totalSamplesCount?: number;
}

export interface VerticalPodAutoscalerCheckpoint {
  apiVersion: 'autoscaling.k8s.io/v1';
  kind: 'VerticalPodAutoscalerCheckpoint';
  metadata: { name: string; namespace: string };
  spec: { vpaObjectName: string; containerName: string; scopeValue?: string };
  status: VerticalPodAutoscalerCheckpointStatus;
}

function histogramToJson(h: DecayingHistogramCheckpointData): HistogramCheckpoint {
  const out: HistogramCheckpoint = { referenceTimestamp: formatMetaTime(h.referenceTimestamp) };
  if (h.bucketWeights.size > 0) {
    const weights: Record<string, number> = {};
    for (const [b, w] of [...h.bucketWeights].sort((x, y) => x[0] - y[0])) weights[String(b)] = w;
    out.bucketWeights = weights;
  }
  if (h.totalWeight !== 0) out.totalWeight = h.totalWeight;
  return out;
}

export function statusToJson(s: CheckpointStatusData): VerticalPodAutoscalerCheckpointStatus {
  const out: VerticalPodAutoscalerCheckpointStatus = {
    lastUpdateTime: formatMetaTime(s.lastUpdateTime),
    version: s.version,
    cpuHistogram: histogramToJson(s.cpuHistogram),
    memoryHistogram: histogramToJson(s.memoryHistogram),
    firstSampleStart: formatMetaTime(s.firstSampleStart),
    lastSampleStart: formatMetaTime(s.lastSampleStart),
  };
  if (s.totalSamplesCount !== 0) out.totalSamplesCount = s.totalSamplesCount;
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function timeFromJson(v: unknown, field: string): GoTime {
  if (v === null || v === undefined || v === '') return ZERO_TIME;
  if (typeof v !== 'string') throw new CheckpointError(`${field}: not an RFC 3339 timestamp`);
  const t = parseRfc3339(v);
  if (t === undefined) throw new CheckpointError(`${field}: not an RFC 3339 timestamp`);
  return t;
}

function histogramFromJson(v: unknown, field: string): DecayingHistogramCheckpointData {
  if (v === undefined || v === null)
    return { referenceTimestamp: ZERO_TIME, totalWeight: 0, bucketWeights: new Map() };
  if (!isRecord(v)) throw new CheckpointError(`${field}: not an object`);
  const totalWeight = v.totalWeight ?? 0;
  if (typeof totalWeight !== 'number' || !Number.isFinite(totalWeight))
    throw new CheckpointError(`${field}.totalWeight: not a number`);
  const bucketWeights = new Map<number, number>();
  const raw = v.bucketWeights ?? {};
  if (!isRecord(raw)) throw new CheckpointError(`${field}.bucketWeights: not an object`);
  for (const [k, w] of Object.entries(raw)) {
    if (!/^[+-]?\d+$/.test(k))
      throw new CheckpointError(`${field}.bucketWeights: key ${JSON.stringify(k)} is not an int`);
    if (typeof w !== 'number' || !Number.isInteger(w) || w < 0 || w > 0xffffffff)
      throw new CheckpointError(`${field}.bucketWeights.${k}: not a uint32`);
    bucketWeights.set(Number(k), w);
  }
  return {
    referenceTimestamp: timeFromJson(v.referenceTimestamp, `${field}.referenceTimestamp`),
    totalWeight,
    bucketWeights,
  };
}

/** Parses a checkpoint status as the API server would hand it to the recommender. */
export function statusFromJson(v: unknown): CheckpointStatusData {
  if (!isRecord(v)) throw new CheckpointError('checkpoint status: not an object');
  const count = v.totalSamplesCount ?? 0;
  if (typeof count !== 'number' || !Number.isSafeInteger(count))
    throw new CheckpointError('totalSamplesCount: not an integer');
  const version = v.version ?? '';
  if (typeof version !== 'string') throw new CheckpointError('version: not a string');
  return {
    lastUpdateTime: timeFromJson(v.lastUpdateTime, 'lastUpdateTime'),
    version,
    cpuHistogram: histogramFromJson(v.cpuHistogram, 'cpuHistogram'),
    memoryHistogram: histogramFromJson(v.memoryHistogram, 'memoryHistogram'),
    firstSampleStart: timeFromJson(v.firstSampleStart, 'firstSampleStart'),
    lastSampleStart: timeFromJson(v.lastSampleStart, 'lastSampleStart'),
    totalSamplesCount: count,
  };
}

/** FNV-1a, 32 bits: the hash in scoped checkpoint names (kubernetes/autoscaler#10012). */
export function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(s)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The whole object: named "<vpa>-<container>", or, for a scoped (per-node) checkpoint as in the
 * DaemonSet-scope implementation PR, "<vpa>-<container>-<fnv32a(scopeValue) in hex>", with an empty scope
 * value stored as "__empty__".
 */
export function checkpointObject(
  namespace: string,
  vpaName: string,
  containerName: string,
  status: VerticalPodAutoscalerCheckpointStatus,
  scopeValue?: string,
): VerticalPodAutoscalerCheckpoint {
  const scoped = scopeValue === undefined ? undefined : scopeValue === '' ? '__empty__' : scopeValue;
  const name =
    scoped === undefined
      ? `${vpaName}-${containerName}`
      : `${vpaName}-${containerName}-${fnv32a(scoped).toString(16)}`;
  return {
    apiVersion: 'autoscaling.k8s.io/v1',
    kind: 'VerticalPodAutoscalerCheckpoint',
    metadata: { name, namespace },
    spec: { vpaObjectName: vpaName, containerName, ...(scoped === undefined ? {} : { scopeValue: scoped }) },
    status,
  };
}
