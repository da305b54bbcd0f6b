/**
 * One Event on a VerticalPodAutoscaler (`kubectl describe vpa` shows it), as every node-scope notice
 * writes it: reverts, guard holds, upstream VPA warnings. The caller takes the write budget and
 * decides what a failure means.
 */
import { VPA_GROUP } from '../kernel/crds/vpa.js';
import type { CycleRun } from './cycle-run.js';

export interface VpaRef {
  namespace: string;
  name: string;
  uid?: string;
}

export interface VpaEventSpec {
  /** Makes the Event's name unique within this cycle (`<vpa>.<cycle time in hex><suffix>`). */
  suffix: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** An Event's message is cut where the apiserver would refuse it. */
const MESSAGE_LIMIT = 1024;

export async function postVpaEvent(run: CycleRun, vpa: VpaRef, e: VpaEventSpec): Promise<void> {
  const at = new Date(run.now).toISOString();
  const { namespace, name, uid } = vpa;
  await run.reader.send(
    'create VPA event',
    'POST',
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${run.now.toString(16)}${e.suffix}`, namespace },
      involvedObject: {
        apiVersion: `${VPA_GROUP}/v1`,
        kind: 'VerticalPodAutoscaler',
        name,
        namespace,
        ...(uid ? { uid } : {}),
      },
      type: e.type,
      reason: e.reason,
      message: e.message.slice(0, MESSAGE_LIMIT),
      source: { component: 'fleetscope-nodescope' },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    },
  );
}
