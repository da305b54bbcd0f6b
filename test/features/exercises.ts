/**
 * How the generic on -> use -> off test uses each registered feature: the cluster it needs, what a user
 * does with the feature (the "use"), how its components check in (the real workers, or the in-cluster
 * agent), what an admin removes by hand when the off transition waits for it, and what legitimately
 * outlives the feature (the user's own objects, and what a KEP says must stay). A feature registered
 * without an exercise here fails the generic test, by name: joining the catalog is joining the test.
 */
import type { SimClusterSpec } from '../../local/sim/index.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { CLUSTER_PROPERTY } from '../../shared/claims/crd.js';
import { setCustomClaim } from '../../shared/claims/membership.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { FEATURE_CRD } from '../../shared/features/crd.js';
import { installScopedCrd } from '../../shared/nodescope/crd.js';
import { agentDaemonSet, VPA_RESOURCE, vpaObject } from '../nodescope/helpers.js';
import { type FeatureEnv, MINUTE, type WorkerEnv } from './helpers.js';

export interface Exercise {
  cluster: Omit<SimClusterSpec, 'name'>;
  prepare?(env: WorkerEnv, cluster: string): Promise<void>;
  /** A use that reads the simulator (`simOf`) has a real-cluster variant in test/cluster/lifecycle.real.test.ts. */
  use(env: WorkerEnv, cluster: string): Promise<void>;
  /** The feature's components checking in (each reports the value it sees); no simulator needed. */
  checkIn(env: WorkerEnv, cluster: string): Promise<unknown>;
  /** What an admin removes when the off transition waits for it (through the API: any cluster). */
  byHand?(env: WorkerEnv, cluster: string): Promise<void>;
  /** Objects (collection/key) and items (sort keys) that may outlive the feature, and why. */
  outlives?: { objects?: RegExp[]; items?: RegExp[] };
  /** "collection/key change" ("label k added", "spec.k changed") the feature may leave, and why. */
  changes?: RegExp[];
  /** Objects the user makes while using it: turning it off must leave them. */
  keeps?: RegExp[];
}

export const EXERCISES: Record<string, Exercise> = {
  'fleetscope-system/balloons': {
    cluster: { nodes: 2 },
    async use(env, cluster) {
      await new DynamoBalloonStore(env.runtime.db, env.runtime.table).putPolicy(
        cluster,
        validatePolicy({
          name: 'pool',
          selector: 'kubernetes.io/os=linux',
          max: { cpu: '2', memory: '4Gi' },
        }),
      );
      await env.cycle(cluster);
      await env.advance(MINUTE);
      await env.cycle(cluster);
      const balloons = simOf(env)
        .sim.cluster(cluster)
        .store.list('pods', 'kube-system')
        .filter((p) => p.metadata.labels?.['fleetscope.io/balloon']);
      if (balloons.length === 0) throw new Error('no balloon was made');
    },
    checkIn: (env, cluster) => env.cycle(cluster),
  },
  'fleetscope-system/nodescope': {
    cluster: { nodes: 2, vpaCrd: true, daemonSets: [agentDaemonSet()] },
    async use(env, cluster) {
      await installScopedCrd(env.client(cluster));
      simOf(env)
        .sim.cluster(cluster)
        .store.put(VPA_RESOURCE, vpaObject({ mode: 'Auto', via: 'spec' }));
      for (let i = 0; i < 14; i++) {
        await env.advance(5 * MINUTE);
        await env.cycle(cluster);
      }
      const annotated = simOf(env)
        .sim.cluster(cluster)
        .store.list('pods', 'monitoring')
        .filter((p) => p.metadata.annotations?.['fleetscope.io/recommendation']);
      if (annotated.length === 0) throw new Error('no pod was given a recommendation');
    },
    checkIn: (env, cluster) => env.cycle(cluster),
    // The user's VPA stays (its spec.scope and fleetscope's status are what must go).
    outlives: { objects: [/^verticalpodautoscalers\.autoscaling\.k8s\.io\/monitoring\/agent$/] },
    changes: [
      // Its use: the agent's pods resized in place. Off never evicts, so they keep the size until recreated.
      /^pods\/monitoring\/agent-[a-z0-9]+ spec\.containers changed$/,
      // The admin's install of the scoped VPA CRD (the use's first step, `fleetscope install-crd`), not
      // the feature's: rolling it back is re-applying the stock CRD (shared/nodescope/crd.ts).
      /^customresourcedefinitions\.apiextensions\.k8s\.io\/verticalpodautoscalers\.autoscaling\.k8s\.io (annotation fleetscope\.io\/status-shape added|spec\.versions changed)$/,
    ],
    keeps: [/^verticalpodautoscalers\.autoscaling\.k8s\.io\/monitoring\/agent$/],
  },
  'fleetscope-system/claims': {
    cluster: { nodes: 1 },
    async use(env, cluster) {
      await env.claimsCheck(cluster);
      const ports = {
        store: new DynamoClaimStore(env.runtime.db, env.runtime.table),
        registry: env.registry,
        publisher: { publish: async () => {} },
      };
      await setCustomClaim(ports, cluster, 'zone.example.com', 'eu-1a');
      await env.claimsCheck(cluster);
      const props = (await claimsListed(env, cluster)).map((p) => p.metadata.name);
      if (!props.includes('zone.example.com')) throw new Error(`claims not written: ${props}`);
    },
    checkIn: (env, cluster) => env.claimsCheck(cluster),
    // KEP-2149: the cluster ID exists for the cluster's whole life, in the cluster and in the registry.
    outlives: {
      objects: [
        /^clusterproperties\.about\.k8s\.io\/id\.k8s\.io$/,
        /^customresourcedefinitions\.apiextensions\.k8s\.io\/clusterproperties\.about\.k8s\.io$/,
      ],
      items: [/^claims#identity$/],
    },
  },
  'widgets/widgets': {
    cluster: { nodes: 1 },
    prepare: async (env, cluster) => {
      await env.client(cluster).core.createNamespace({ body: { metadata: { name: 'widgets' } } });
    },
    async use(env, cluster) {
      await agentCheckIn(env, cluster);
      await env.client(cluster).core.createNamespacedConfigMap({
        namespace: 'widgets',
        body: {
          metadata: { name: 'widget-1', labels: { 'widgets.example.com/stamped': 'true' } },
          data: { made: 'by a user' },
        },
      });
    },
    checkIn: agentCheckIn,
    byHand: async (env, cluster) => {
      const c = env.client(cluster);
      const stamped = 'widgets.example.com/stamped=true';
      for (const w of (await c.core.listNamespacedConfigMap({ namespace: 'widgets', labelSelector: stamped }))
        .items)
        await c.core.deleteNamespacedConfigMap({ name: w.metadata?.name ?? '', namespace: 'widgets' });
    },
    outlives: { objects: [/^namespaces\/widgets$/] }, // the third party's own install
  },
};

/** The simulator behind an env, for the uses that read or write its store directly. */
function simOf(env: WorkerEnv): FeatureEnv {
  if (!('sim' in env)) throw new Error('this exercise reads the simulator: give it a real-cluster variant');
  return env as FeatureEnv;
}

/** The cluster's ClusterProperties, read through the API. */
async function claimsListed(env: WorkerEnv, cluster: string): Promise<{ metadata: { name: string } }[]> {
  const { group, plural, versions } = CLUSTER_PROPERTY;
  const list = (await env
    .client(cluster)
    .custom.listClusterCustomObject({ group, version: versions[1], plural })) as {
    items: { metadata: { name: string } }[];
  };
  return list.items;
}

/** The widget agent: reads its Feature object and reports what it sees, as an in-cluster component does. */
export async function agentCheckIn(env: WorkerEnv, cluster: string): Promise<void> {
  const ref = {
    group: FEATURE_CRD.group,
    version: FEATURE_CRD.version,
    plural: FEATURE_CRD.plural,
    namespace: 'widgets',
    name: 'widgets',
  };
  const c = env.client(cluster);
  const f = (await c.custom.getNamespacedCustomObject(ref)) as {
    status?: { value?: 'on' | 'off'; usesEpoch?: number };
  };
  const value = f.status?.value ?? 'off';
  const epoch = f.status?.usesEpoch; // echoed: a use counts in a wait only with the current epoch
  await c.patch('widget agent reports', 'merge', (o) =>
    c.custom.patchNamespacedCustomObjectStatus(
      {
        ...ref,
        body: {
          status: { uses: { 'widget-agent': { value, time: new Date(env.now()).toISOString(), epoch } } },
        },
      },
      o,
    ),
  );
}
