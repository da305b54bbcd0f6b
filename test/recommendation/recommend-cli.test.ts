/**
 * `fleetscope recommend` end to end: the CLI is spawned on generated multi-day histories and its
 * integer outputs must equal what the library (the code the pipeline runs) gives on the same history.
 */
import { describe, expect, it } from 'vitest';
import { formatCpu, formatMemory } from '../../shared/kernel/quantity.js';
import type { Bytes, Millicores } from '../../shared/kernel/units.js';
import {
  type ContainerPolicy,
  type ContainerRecommendation,
  type RecommenderOptions,
  type ResourceAmounts,
  recommend,
  type ScopeState,
  toCheckpoint,
} from '../../shared/recommendation/index.js';
import { runFleetscope } from '../support/cli.js';
import { generateHistory, type HistoryJson, latestTime, stateFromHistory } from './history.js';

const MiB = 1024 * 1024;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `fleetscope recommend` through the bundled bin, as users run it (tsx's start cost 2-3 s a run). */
async function runCli(args: string[], stdin: string): Promise<Run> {
  const r = await runFleetscope(['recommend', ...args], { stdin });
  return { code: r.code, stdout: r.out, stderr: r.err };
}

interface ContainerJson extends HistoryJson {
  name: string;
  policy?: Record<string, unknown>;
  requests?: { cpu?: string; memory?: string };
  limits?: { cpu?: string; memory?: string };
}

type Amounts = { cpuMillicores?: number; memoryBytes?: number; cpu?: string; memory?: string };
interface OutContainer {
  name: string;
  target?: Amounts;
  lowerBound?: Amounts;
  upperBound?: Amounts;
  uncappedTarget?: Amounts;
  limits?: Amounts;
  checkpoint: unknown;
}

async function recommendViaCli(input: unknown): Promise<OutContainer[]> {
  const run = await runCli(['--input', '-'], JSON.stringify(input));
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return (JSON.parse(run.stdout) as { containers: OutContainer[] }).containers;
}

function amounts(r: ResourceAmounts): Amounts {
  const out: Amounts = {};
  if (r.cpu !== undefined) out.cpuMillicores = r.cpu;
  if (r.memory !== undefined) out.memoryBytes = r.memory;
  if (r.cpu !== undefined) out.cpu = formatCpu(r.cpu);
  if (r.memory !== undefined) out.memory = formatMemory(r.memory);
  return out;
}

/** The library's answer for the same input, built without the CLI's code. */
function viaLibrary(
  containers: ContainerJson[],
  options: RecommenderOptions,
  policies: Record<string, ContainerPolicy>,
) {
  const now = latestTime(...containers);
  const states = new Map<string, ScopeState>(containers.map((c) => [c.name, stateFromHistory(c, options)]));
  const recs = recommend(
    containers.map((c) => ({
      name: c.name,
      state: states.get(c.name) as ScopeState,
      ...(policies[c.name] ? { policy: policies[c.name] } : {}),
      ...(c.requests ? { requests: resources(c.requests) } : {}),
      ...(c.limits ? { limits: resources(c.limits) } : {}),
    })),
    options,
  );
  const byName = new Map<string, ContainerRecommendation>(recs.map((r) => [r.name, r]));
  return containers.map((c) => {
    const r = byName.get(c.name);
    const checkpoint = toCheckpoint(states.get(c.name) as ScopeState, now);
    // The current requests are echoed beside the recommendation (tables show the change).
    const requests = c.requests ? { requests: amounts(resources(c.requests)) } : {};
    if (!r) return { name: c.name, ...requests, checkpoint };
    return {
      name: c.name,
      ...requests,
      target: amounts(r.target),
      lowerBound: amounts(r.lowerBound),
      upperBound: amounts(r.upperBound),
      uncappedTarget: amounts(r.uncappedTarget),
      ...(r.limits ? { limits: amounts(r.limits) } : {}),
      checkpoint,
    };
  });
}

/** The few quantity strings these tests use, parsed by hand so the comparison does not reuse the CLI's parser. */
function resources(r: { cpu?: string; memory?: string }): ResourceAmounts {
  const out: ResourceAmounts = {};
  if (r.cpu !== undefined)
    out.cpu = (r.cpu.endsWith('m') ? Number(r.cpu.slice(0, -1)) : Number(r.cpu) * 1000) as Millicores;
  if (r.memory !== undefined)
    out.memory = (
      r.memory.endsWith('Mi')
        ? Number(r.memory.slice(0, -2)) * MiB
        : Number(r.memory.slice(0, -2)) * 1024 * MiB
    ) as Bytes;
  return out;
}

const agentHistory = (cpuScale = 1) =>
  generateHistory({
    start: '2024-03-01T00:00:00Z',
    days: 8,
    cpuBaseMillicores: 180,
    cpuDiurnal: 0.6,
    cpuNoise: 0.25,
    cpuScale,
    memoryStartBytes: 300 * MiB,
    memoryGrowthPerDayBytes: 12 * MiB,
    ooms: [
      { afterHours: 5 * 24 + 12, memoryRequestBytes: 384 * MiB },
      { afterHours: 6 * 24 + 3, memoryRequestBytes: 512 * MiB },
    ],
    seed: 7,
  });

const sidecarHistory = () =>
  generateHistory({
    start: '2024-03-01T00:00:00Z',
    days: 8,
    cpuBaseMillicores: 12,
    cpuDiurnal: 0.3,
    memoryStartBytes: 40 * MiB,
    memoryGrowthPerDayBytes: 1 * MiB,
    seed: 11,
  });

describe('fleetscope recommend', () => {
  it('gives the library results on an 8-day history with OOMs, min/max policies, limits and mode Off', async () => {
    const policies: Record<string, ContainerPolicy> = {
      agent: {
        minAllowed: { cpu: 50 as Millicores, memory: (64 * MiB) as Bytes },
        maxAllowed: { cpu: 2000 as Millicores, memory: (2048 * MiB) as Bytes },
        controlledValues: 'RequestsAndLimits',
      },
      sidecar: { minAllowed: { cpu: 30 as Millicores }, maxAllowed: { memory: (48 * MiB) as Bytes } },
      debug: { mode: 'Off' },
    };
    const containers: ContainerJson[] = [
      {
        name: 'agent',
        ...agentHistory(),
        requests: { cpu: '200m', memory: '384Mi' },
        limits: { cpu: '1', memory: '768Mi' },
      },
      { name: 'sidecar', ...sidecarHistory() },
      { name: 'debug', ...sidecarHistory() },
    ];
    const input = {
      containers: containers.map((c) => ({
        ...c,
        ...(c.name === 'agent'
          ? {
              policy: {
                minAllowed: { cpu: '50m', memory: '64Mi' },
                maxAllowed: { cpu: '2', memory: '2Gi' },
                controlledValues: 'RequestsAndLimits',
              },
            }
          : {}),
        ...(c.name === 'sidecar'
          ? { policy: { minAllowed: { cpu: '30m' }, maxAllowed: { memory: '48Mi' } } }
          : {}),
        ...(c.name === 'debug' ? { policy: { mode: 'Off' } } : {}),
      })),
    };
    const out = await recommendViaCli(input);
    const expected = viaLibrary(containers, {}, policies);
    expect(out).toEqual(expected);

    const [agent, sidecar, debug] = out as [OutContainer, OutContainer, OutContainer];
    // mode Off: no recommendation, but the checkpoint is still written, as upstream does.
    expect(debug.target).toBeUndefined();
    expect(debug.checkpoint).toMatchObject({ version: 'v3', totalSamplesCount: 11520 });
    // Two containers share the pod minimum (Off does not count): 250Mi/2 before capping, then the
    // sidecar's maxAllowed of 48Mi caps target and bounds alike, but not the uncapped target.
    expect(sidecar.uncappedTarget?.memoryBytes).toBe(125 * MiB);
    expect(sidecar.target?.memoryBytes).toBe(48 * MiB);
    expect(sidecar.lowerBound?.memoryBytes).toBe(48 * MiB);
    expect(sidecar.target?.cpuMillicores).toBeGreaterThanOrEqual(30);
    // The OOM at 512Mi request bumps the memory target above 1.2 × 512Mi.
    expect(agent.target?.memoryBytes).toBeGreaterThan(1.2 * 512 * MiB);
    // The agent's limits keep the 1:5 CPU and 1:2 memory limit/request ratios.
    const t = agent.target as Required<Amounts>;
    expect(agent.limits?.cpuMillicores).toBe(Math.floor((t.cpuMillicores * 1000) / 200));
    expect(agent.limits?.memoryBytes).toBe(Math.floor((t.memoryBytes * 768) / 384));
    expect(agent.uncappedTarget).toEqual(agent.target);
  });

  it('follows the load: four times the CPU gives a markedly larger target', async () => {
    const base = { name: 'agent', ...agentHistory(1) };
    const heavy = { name: 'agent', ...agentHistory(4) };
    const [outBase] = await recommendViaCli({ containers: [base] });
    const [outHeavy] = await recommendViaCli({ containers: [heavy] });
    const a = outBase?.target?.cpuMillicores as number;
    const b = outHeavy?.target?.cpuMillicores as number;
    expect(b / a).toBeGreaterThan(3.5);
    expect(b / a).toBeLessThan(4.5);
    expect(outHeavy?.target?.memoryBytes).toBe(outBase?.target?.memoryBytes);
    expect(outBase).toEqual(viaLibrary([base], {}, {})[0]);
  });

  it('applies options, RequestsOnly capping and controlledResources exactly as the library', async () => {
    const options: RecommenderOptions = {
      targetCpuPercentile: 0.95,
      recommendationMarginFraction: 0.1,
      podRecommendationMinCpuMillicores: 100,
      podRecommendationMinMemoryMb: 64,
      cpuHistogramDecayHalfLife: '12h',
      memoryHistogramDecayHalfLife: '36h',
      memoryAggregationInterval: '6h',
      memoryAggregationIntervalCount: 20,
      oomBumpUpRatio: 1.5,
      oomMinBumpUp: 50 * MiB,
      roundCpuMillicores: 5,
      roundMemoryBytes: MiB,
    };
    const containers: ContainerJson[] = [
      {
        name: 'agent',
        ...agentHistory(),
        requests: { cpu: '100m', memory: '256Mi' },
        limits: { cpu: '150m', memory: '512Mi' },
      },
      { name: 'metrics', ...sidecarHistory() },
    ];
    const policies: Record<string, ContainerPolicy> = {
      agent: { controlledValues: 'RequestsOnly' },
      metrics: { controlledResources: ['memory'] },
    };
    const input = {
      containers: containers.map((c) => ({
        ...c,
        policy:
          c.name === 'agent' ? { controlledValues: 'RequestsOnly' } : { controlledResources: ['memory'] },
      })),
      options,
    };
    const out = await recommendViaCli(input);
    expect(out).toEqual(viaLibrary(containers, options, policies));
    const [agent, metrics] = out as [OutContainer, OutContainer];
    expect(agent.limits).toBeUndefined();
    expect(agent.target?.cpuMillicores).toBeLessThanOrEqual(150);
    expect(agent.upperBound?.memoryBytes).toBeLessThanOrEqual(512 * MiB);
    expect((agent.uncappedTarget?.cpuMillicores as number) % 5).toBe(0);
    expect(metrics.target?.cpuMillicores).toBeUndefined();
    expect(Object.keys(metrics.target ?? {})).toEqual(['memoryBytes', 'memory']);
    expect((metrics.target?.memoryBytes as number) % MiB).toBe(0);
  });

  it('names the field of bad input and exits non-zero', async () => {
    const good = { name: 'a', cpuSamples: [{ t: '2024-01-01T00:00:00Z', millicores: 5 }] };
    const cases: Array<[unknown, string]> = [
      [
        {
          containers: [
            {
              name: 'a',
              cpuSamples: [
                { t: '2024-01-01T00:00:00Z', millicores: 1 },
                { t: '2024-01-01T00:01:00Z', millicores: 1 },
                { t: '2024-01-01T00:02:00Z', millicores: 1 },
                { t: 'yesterday', millicores: 1 },
              ],
            },
          ],
        },
        'containers[0].cpuSamples[3].t: not an RFC 3339 timestamp',
      ],
      [{ containers: [{ ...good, colour: 'red' }] }, 'containers[0].colour: unknown field'],
      [{ containers: [good], extra: 1 }, 'extra: unknown field'],
      [
        { containers: [{ ...good, memorySamples: [{ t: '2024-01-01T00:00:00Z', bytes: -5 }] }] },
        'containers[0].memorySamples[0].bytes: must not be negative',
      ],
      [
        { containers: [{ ...good, ooms: [{ t: '2024-01-01T00:00:00Z', memoryRequestBytes: 1.5 }] }] },
        'containers[0].ooms[0].memoryRequestBytes: must be an integer',
      ],
      [
        { containers: [good], options: { cpuHistogramDecayHalfLife: '1 day' } },
        'options.cpuHistogramDecayHalfLife: not a positive Go duration',
      ],
      [
        { containers: [good], options: { memoryAggregationInterval: '-1h' } },
        'options.memoryAggregationInterval',
      ],
      [
        { containers: [good], options: { targetCpuPercentil: 0.5 } },
        'options.targetCpuPercentil: unknown field',
      ],
      [
        { containers: [{ ...good, policy: { maxAllowed: { cpu: '2 cores' } } }] },
        'containers[0].policy.maxAllowed.cpu: not a CPU quantity',
      ],
      [{ containers: [{ ...good, policy: { mode: 'Sometimes' } }] }, 'containers[0].policy.mode'],
      [{ containers: [{ ...good, requests: { memory: '-1Gi' } }] }, 'containers[0].requests.memory'],
      [{ containers: [good, good] }, 'containers[1].name: container "a" is listed twice'],
      [
        { containers: [good], options: { targetCpuPercentile: 90 } },
        'options.targetCpuPercentile: a percentile is between 0 and 1',
      ],
      [
        { containers: [{ ...good, policy: { minAllowed: { cpu: '500m' }, maxAllowed: { cpu: '100m' } } }] },
        'containers[0].policy.minAllowed.cpu: exceeds maxAllowed.cpu',
      ],
    ];
    const runs = await Promise.all(cases.map(([input]) => runCli(['--input', '-'], JSON.stringify(input))));
    runs.forEach((run, i) => {
      const message = cases[i]?.[1] as string;
      expect(run.code, message).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(message);
    });
    const notJson = await runCli(['--input', '-'], '{"containers": [');
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('input: not JSON');
    const noFlag = await runCli([], '');
    expect(noFlag.code).toBe(2);
    expect(noFlag.stderr).toContain('--input FILE is required');
  });
});
