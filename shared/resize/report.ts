/**
 * What a ResizeReport becomes outside: the detail of a PodResized / PodResizeRefused bus event and the
 * name of the EMF metric it counts in.
 */
import { formatCpu, formatMemory } from '../kernel/quantity.js';
import type { Bytes, Millicores } from '../kernel/units.js';
import type { Detail } from '../platform/events.js';
import type { ContainerDesired, ResizeReport, ResourcePair } from './types.js';

/** Metric per outcome: PodResizesRequested, ...Completed, ...Deferred, ...Infeasible, ...Refused (others). */
export function resizeMetricName(r: ResizeReport): string {
  if (r.kind === 'resized') return r.outcome === 'Requested' ? 'PodResizesRequested' : 'PodResizesCompleted';
  if (r.refusal === 'Deferred') return 'PodResizesDeferred';
  if (r.refusal === 'Infeasible') return 'PodResizesInfeasible';
  if (r.refusal === 'Unsupported') return 'PodResizesUnsupported';
  return 'PodResizesRefused';
}

function pair(p: ResourcePair | undefined): { cpu?: string; memory?: string } | undefined {
  if (!p) return undefined;
  const out: { cpu?: string; memory?: string } = {};
  if (p.cpu !== undefined) out.cpu = formatCpu(p.cpu as Millicores);
  if (p.memory !== undefined) out.memory = formatMemory(p.memory as Bytes);
  return Object.keys(out).length > 0 ? out : undefined;
}

function resources(d: ContainerDesired) {
  const requests = pair(d.requests);
  const limits = pair(d.limits);
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

export interface ReportContext {
  cluster: string;
  /** The capability that asked for the resize ("nodescope", "balloons"). */
  source: string;
  owner?: { kind: string; name: string };
}

/** The bus event for a report: PodResized for requests and completions, PodResizeRefused for refusals. */
export function resizeEventDetail(
  r: ResizeReport,
  ctx: ReportContext,
):
  | { detailType: 'PodResized'; detail: Detail<'PodResized'> }
  | { detailType: 'PodResizeRefused'; detail: Detail<'PodResizeRefused'> } {
  const common = {
    cluster: ctx.cluster,
    source: ctx.source,
    namespace: r.namespace,
    pod: r.pod,
    podUid: r.podUid,
    ...(r.node ? { node: r.node } : {}),
    ...(ctx.owner ? { owner: ctx.owner } : {}),
    containers: r.containers.map((c) => ({
      name: c.name,
      before: resources(c.before),
      after: resources(c.after),
    })),
    at: new Date(r.at).toISOString(),
  };
  if (r.kind === 'resized') return { detailType: 'PodResized', detail: { ...common, outcome: r.outcome } };
  return {
    detailType: 'PodResizeRefused',
    detail: {
      ...common,
      refusal: r.refusal,
      message: r.message.slice(0, 1024),
      ...(r.retryAfter !== undefined ? { retryAfter: new Date(r.retryAfter).toISOString() } : {}),
    },
  };
}
