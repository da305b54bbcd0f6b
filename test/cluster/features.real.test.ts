/**
 * Feature transitions (KEP-3920) on a whole real cluster: a third party's feature whose on applies a
 * DaemonSet (pods by the real controller, run by the hollow kubelets), used by its in-cluster agent, and
 * whose off deletes the DaemonSet and waits for its pods, which the real garbage collector and kubelets
 * remove, then waits for its users' objects, which an admin removes by deleting their namespace and the
 * real namespace controller empties and finalizes. on -> use -> off, then nothing dangles.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadCatalog } from '../../shared/features/catalog.js';
import { DynamoClusterState } from '../../shared/features/cluster-state-dynamo.js';
import { FEATURE_CRD } from '../../shared/features/crd.js';
import { danglingOf } from '../../shared/features/dangling.js';
import { parseDeclarations } from '../../shared/features/declaration.js';
import { setDesired } from '../../shared/features/desired.js';
import { type FeatureRecord, finalOf, targetOf } from '../../shared/features/model.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import { type ReconcilerPorts, reconcileCluster } from '../../shared/features/reconciler.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import type { FeatureStore } from '../../shared/features/store.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { dynamoTaskStores } from '../../shared/features/task-stores-dynamo.js';
import { describeRealCluster } from '../support/real-cluster.js';
import { type CycleEnv, PAUSE, rawPods, startCycleEnv } from './helpers.js';

const CLUSTER = 'f-cluster';
const REF = { namespace: 'gadgets', name: 'gadgets' };
const MADE = 'gadgets.example.com/made';

const DECLARATION = `
features:
  - namespace: gadgets
    name: gadgets
    description: Gadgets, run by the gadget agent on every node
    default: "off"
    components: [gadget-agent]
    usesWaitSeconds: 0
    enable:
      - task: apply-manifests
        manifests:
          - apiVersion: apps/v1
            kind: DaemonSet
            metadata: { name: gadget-agent, namespace: gadgets }
            spec:
              selector: { matchLabels: { app: gadget-agent } }
              template:
                metadata: { labels: { app: gadget-agent } }
                spec:
                  terminationGracePeriodSeconds: 5
                  containers: [{ name: agent, image: ${PAUSE}, resources: { requests: { cpu: 50m } } }]
    disable:
      - task: wait-for-uses
        waitSeconds: 0
      - task: delete-objects
        apiVersion: apps/v1
        kind: DaemonSet
        namespace: gadgets
        name: gadget-agent
      - task: wait-for-no-objects
        apiVersion: v1
        kind: Pod
        namespace: gadgets
        selector: app=gadget-agent
      - task: wait-for-no-objects
        apiVersion: v1
        kind: ConfigMap
        namespace: gadget-data
        selector: ${MADE}=true
`;

describeRealCluster(
  'feature transitions',
  {
    nodes: [
      { name: 'f-a', cpus: 1, memory: '1Gi' },
      { name: 'f-b', cpus: 1, memory: '1Gi' },
    ],
    metrics: true,
  },
  (k) => {
    let env: CycleEnv;
    let store: FeatureStore;
    let spec: FeatureSpec;
    const now = () => env.clock.now();
    const ports = async (): Promise<ReconcilerPorts> => ({
      store,
      catalog: await loadCatalog(store),
      connect: async () => env.client,
      tasks: dynamoTaskStores(env.runtime.db, env.runtime.table),
      now,
      id: `test/${randomUUID().slice(0, 6)}`,
      publish: async () => {},
    });

    /** The gadget agent: reads its Feature object and reports what it sees, echoing the epoch. */
    const agentCheckIn = async () => {
      const ref = {
        group: FEATURE_CRD.group,
        version: FEATURE_CRD.version,
        plural: FEATURE_CRD.plural,
        ...REF,
      };
      const f = (await env.client.custom.getNamespacedCustomObject(ref).catch(() => undefined)) as
        | { status?: { value?: 'on' | 'off'; usesEpoch?: number } }
        | undefined;
      if (!f) return;
      const use = {
        value: f.status?.value ?? 'off',
        time: new Date(now()).toISOString(),
        epoch: f.status?.usesEpoch,
      };
      await env.client.patch('gadget agent reports', 'merge', (o) =>
        env.client.custom.patchNamespacedCustomObjectStatus(
          { ...ref, body: { status: { uses: { 'gadget-agent': use } } } },
          o,
        ),
      );
    };

    /** Reconciles until stable, the clock moved to each wait's next look, real time for the controllers. */
    const drive = async (between: () => Promise<void>): Promise<FeatureRecord> => {
      for (let pass = 0; pass < 120; pass++) {
        await reconcileCluster(await ports(), CLUSTER, REF);
        const r = await store.get(CLUSTER, REF);
        if (r && r.state === finalOf(targetOf(r))) return r;
        const t = r?.tasks[0];
        env.clock.set(Math.max(now() + 1000, t?.notBefore ?? 0, t?.claim?.until ?? 0));
        await between();
        await sleep(250);
      }
      throw new Error(`gadgets did not settle: ${JSON.stringify((await store.get(CLUSTER, REF))?.tasks[0])}`);
    };

    beforeAll(async () => {
      env = await startCycleEnv(k);
      store = new DynamoFeatureStore(env.runtime.db, env.runtime.table);
      [spec] = parseDeclarations(DECLARATION, 'gadgets.yaml') as [FeatureSpec];
      await store.putDeclaration({ ...spec, registeredAt: now() });
      await k.namespace('gadgets');
      await k.namespace('gadget-data');
    }, 60_000);
    afterAll(async () => {
      await env?.stop();
    });

    it('turns on: the real DaemonSet controller runs the applied DaemonSet’s pods on every node', async () => {
      await setDesired(store, spec, CLUSTER, 'on', 'test', {}, now());
      const on = await drive(agentCheckIn);
      expect(on.state).toBe('On');
      const pods = await k.waitFor('a gadget agent Running on each node', async () => {
        const list = await rawPods(k, 'gadgets', 'app=gadget-agent');
        return list.length === 2 && list.every((p) => p.status?.phase === 'Running') ? list : undefined;
      });
      expect(pods.map((p) => p.spec?.nodeName).sort()).toEqual(['f-a', 'f-b']);
    });

    it('turns off: the real garbage collector removes the pods, the real namespace controller the users’ objects', async () => {
      // A user makes gadgets (the off waits for them; it never deletes people's data).
      await env.client.core.createNamespacedConfigMap({
        namespace: 'gadget-data',
        body: { metadata: { name: 'gadget-1', labels: { [MADE]: 'true' } }, data: { made: 'by a user' } },
      });
      await agentCheckIn();
      await setDesired(store, spec, CLUSTER, 'off', 'test', {}, now());
      let removedByHand = false;
      const waits = new Set<string>();
      const off = await drive(async () => {
        await agentCheckIn();
        const task = (await store.get(CLUSTER, REF))?.tasks[0];
        if (task) waits.add(task.title);
        // The admin deletes the namespace of the users' gadgets once the transition waits for them.
        if (!removedByHand && task?.spec.task === 'wait-for-no-objects' && task.title.includes('ConfigMap')) {
          removedByHand = true;
          await env.client.core.deleteNamespace({ name: 'gadget-data' });
        }
      });
      expect(off.state).toBe('Off');
      expect(off.history.map((t) => `${t.to}:${t.outcome}`).slice(-2)).toEqual([
        'On:completed',
        'Off:completed',
      ]);
      expect(removedByHand).toBe(true);
      // It waited on the real garbage collector (pods) and namespace controller (ConfigMaps) in turn.
      expect([...waits].filter((t) => /Pod|ConfigMap/.test(t)).length).toBeGreaterThanOrEqual(2);
      expect(await rawPods(k, 'gadgets', 'app=gadget-agent')).toEqual([]);
      // Emptied and finalized by the real namespace controller: the ConfigMaps the wait watched go first,
      // the namespace once its finalizer is off, a moment later on a busy machine.
      let ns = await k.raw('GET', '/api/v1/namespaces/gadget-data');
      for (let i = 0; i < 120 && ns.status === 200; i++) {
        await sleep(250);
        ns = await k.raw('GET', '/api/v1/namespaces/gadget-data');
      }
      expect(ns.status).toBe(404);
      const view = await store.view(CLUSTER, REF);
      const api = new ObjectsApi(env.client);
      const left = await danglingOf(
        spec,
        REF,
        view.uses,
        {
          cluster: CLUSTER,
          state: new DynamoClusterState(env.runtime.db, env.runtime.table),
          client: async () => env.client,
          objects: async () => api,
        },
        { live: true },
      );
      expect(left).toEqual([]);
    });
  },
);
