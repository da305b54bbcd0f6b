/**
 * Generated container histories for the recommender tests: a diurnal CPU curve with noise, a steadily
 * growing memory working set, and optional OOM kills, sampled once a minute as metrics-server would.
 * Deterministic (seeded), so failures reproduce.
 */

import { prng } from '../../shared/kernel/prng.js';
import type { Bytes, EpochMillis, Millicores } from '../../shared/kernel/units.js';
import {
  addCpuSample,
  addMemorySample,
  createState,
  type RecommenderOptions,
  recordOom,
  type ScopeState,
} from '../../shared/recommendation/index.js';
import type { DecayingHistogram } from '../../shared/recommendation/model/decaying-histogram.js';

export { prng };

export interface HistorySpec {
  start: string;
  days: number;
  /** Seconds between samples (60: one metrics-server scrape a minute). */
  stepSeconds?: number;
  cpuBaseMillicores: number;
  /** Day/night swing around the base, as a fraction of it. */
  cpuDiurnal?: number;
  /** Relative noise on each CPU sample. */
  cpuNoise?: number;
  cpuScale?: number;
  memoryStartBytes: number;
  memoryGrowthPerDayBytes?: number;
  memoryNoise?: number;
  ooms?: Array<{ afterHours: number; memoryRequestBytes: number }>;
  seed?: number;
}

export interface HistoryJson {
  cpuSamples: Array<{ t: string; millicores: number }>;
  memorySamples: Array<{ t: string; bytes: number }>;
  ooms: Array<{ t: string; memoryRequestBytes: number }>;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

export function generateHistory(spec: HistorySpec): HistoryJson {
  const rnd = prng(spec.seed ?? 1);
  const start = Date.parse(spec.start);
  const step = (spec.stepSeconds ?? 60) * 1000;
  const n = Math.floor((spec.days * 86_400_000) / step);
  const out: HistoryJson = { cpuSamples: [], memorySamples: [], ooms: [] };
  for (let i = 0; i < n; i++) {
    const t = start + i * step;
    const dayFraction = (((t / 86_400_000) % 1) + 1) % 1;
    const diurnal = 1 + (spec.cpuDiurnal ?? 0.6) * Math.sin(2 * Math.PI * (dayFraction - 0.25));
    const noise = 1 + (spec.cpuNoise ?? 0.2) * (2 * rnd() - 1);
    const cpu = Math.max(0, Math.round(spec.cpuBaseMillicores * diurnal * noise * (spec.cpuScale ?? 1)));
    const days = (t - start) / 86_400_000;
    const mem =
      spec.memoryStartBytes +
      (spec.memoryGrowthPerDayBytes ?? 0) * days +
      (spec.memoryNoise ?? 0.03) * spec.memoryStartBytes * rnd();
    out.cpuSamples.push({ t: iso(t), millicores: cpu });
    out.memorySamples.push({ t: iso(t), bytes: Math.round(mem) });
  }
  for (const o of spec.ooms ?? [])
    out.ooms.push({
      t: iso(start + o.afterHours * 3_600_000 + 17_000),
      memoryRequestBytes: o.memoryRequestBytes,
    });
  return out;
}

/**
 * Feeds a history to a state the way the CLI documents it (written independently of the CLI): CPU in
 * the given order; memory samples and OOMs by time, a memory sample first at equal times. Only events
 * in [from, to) are fed, so a history can be split around a restart.
 */
export function feed(state: ScopeState, h: HistoryJson, from = -Infinity, to = Infinity): void {
  const inRange = (t: number) => t >= from && t < to;
  for (const s of h.cpuSamples) {
    const t = Date.parse(s.t);
    if (inRange(t)) addCpuSample(state, t as EpochMillis, s.millicores as Millicores);
  }
  const events = [
    ...h.memorySamples.map((s, i) => ({ t: Date.parse(s.t), order: 0, i, bytes: s.bytes, oom: false })),
    ...h.ooms.map((o, i) => ({ t: Date.parse(o.t), order: 1, i, bytes: o.memoryRequestBytes, oom: true })),
  ].sort((a, b) => a.t - b.t || a.order - b.order || a.i - b.i);
  for (const e of events) {
    if (!inRange(e.t)) continue;
    if (e.oom) recordOom(state, e.t as EpochMillis, e.bytes as Bytes);
    else addMemorySample(state, e.t as EpochMillis, e.bytes as Bytes);
  }
}

export function firstTime(h: HistoryJson): EpochMillis {
  return Math.min(
    ...[...h.cpuSamples, ...h.memorySamples, ...h.ooms].map((s) => Date.parse(s.t)),
  ) as EpochMillis;
}

/** A new state fed with the whole history, created at its first event. */
export function stateFromHistory(h: HistoryJson, options?: RecommenderOptions): ScopeState {
  const state = createState(firstTime(h), options);
  feed(state, h);
  return state;
}

export function latestTime(...histories: HistoryJson[]): EpochMillis {
  let latest = Number.NEGATIVE_INFINITY;
  for (const h of histories)
    for (const s of [...h.cpuSamples, ...h.memorySamples, ...h.ooms])
      latest = Math.max(latest, Date.parse(s.t));
  return latest as EpochMillis;
}

export function histogramSnapshot(h: DecayingHistogram) {
  return {
    referenceTimestamp: h.referenceTimestamp,
    halfLife: h.halfLife,
    totalWeight: h.histogram.totalWeight,
    minBucket: h.histogram.minBucket,
    maxBucket: h.histogram.maxBucket,
    weights: Array.from(h.histogram.bucketWeight),
  };
}

/** Every field of a state, to compare two states exactly (toEqual tells -0 from 0). */
export function snapshot(s: ScopeState) {
  const a = s.aggregate;
  const c = s.container;
  return {
    config: { ...a.config },
    creationTime: a.creationTime,
    firstSampleStart: a.firstSampleStart,
    lastSampleStart: a.lastSampleStart,
    totalSamplesCount: a.totalSamplesCount,
    cpu: histogramSnapshot(a.cpuUsage),
    memory: histogramSnapshot(a.memoryPeaks),
    lastCpuSampleStart: c.lastCpuSampleStart,
    memoryPeak: c.memoryPeak,
    oomPeak: c.oomPeak,
    windowEnd: c.windowEnd,
    lastMemorySampleStart: c.lastMemorySampleStart,
  };
}
