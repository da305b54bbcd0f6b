/**
 * Third-party features in the soak (issue 16), registered as `fleetscope features register` would,
 * from a declaration file's text, so they pass the same checks:
 *
 * - soak/agent: used by an in-cluster agent (./agent.ts) whose clock is skewed an hour, on by default;
 *   the operator turns it off in some clusters, and the wait for uses must hold it while the agent still
 *   reports on echoing the current epoch, however old or new its times look;
 * - soak/failing: its one enable task applies a kind no cluster serves, so it fails at every attempt; a
 *   flip to on must end in a transition shown stuck with its reason (a bus event, `features list`), not
 *   loop silently. Its task deadline is short so that even the short soak passes it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Simulator } from '../local/sim/index.js';
import { parseDeclarations } from '../shared/features/declaration.js';
import { type FeatureRecord, parseRef, refKey } from '../shared/features/model.js';
import { DynamoFeatureStore } from '../shared/features/store-dynamo.js';
import type { FeatureJson } from '../shared/features/views.js';
import { ClusterClient } from '../shared/k8s/client.js';
import { runCli } from './cli-ops.js';
import type { StuckShown } from './records.js';

export const SOAK_NS = 'soak';
export const AGENT_FEATURE = `${SOAK_NS}/agent`;
export const AGENT_COMPONENT = 'soak-agent';
export const FAILING_FEATURE = `${SOAK_NS}/failing`;
/** The failing feature's task deadline: a few soak cycles. */
export const FAILING_DEADLINE_MINUTES = 3;

const DECLARATIONS = `
features:
  - namespace: ${SOAK_NS}
    name: agent
    description: used by the soak's in-cluster agent, whose clock is skewed
    default: "on"
    components: [${AGENT_COMPONENT}]
    usesWaitSeconds: 120
  - namespace: ${SOAK_NS}
    name: failing
    description: its task applies a kind no cluster serves, so it fails every time
    default: "off"
    taskDeadlineMinutes: ${FAILING_DEADLINE_MINUTES}
    enable:
      - task: apply-manifests
        manifests:
          - apiVersion: gadgets.soak.example/v1
            kind: Gadget
            metadata: { name: gadget, namespace: ${SOAK_NS} }
`;

/**
 * Registers the declarations and makes their namespace in every cluster (where their Feature objects
 * live), before the first cycle.
 */
export async function registerDeclared(
  db: DynamoDBDocumentClient,
  table: string,
  sim: Simulator,
  now: number,
): Promise<void> {
  const store = new DynamoFeatureStore(db, table);
  for (const spec of parseDeclarations(DECLARATIONS, 'soak-features.yaml'))
    await store.putDeclaration({ ...spec, registeredAt: now });
  for (const c of sim.clusters) {
    const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: c.name, context: c.name });
    try {
      await client.core.createNamespace({ body: { metadata: { name: SOAK_NS } } });
    } finally {
      await client.close();
    }
  }
}

/**
 * Where the run showed transitions stuck: the FeatureTransitionChanged stuck events the runtimes put on
 * their buses, and the rows `fleetscope features list` (run as an operator would, at the end) shows
 * stuck. Keys: "cluster namespace/name".
 */
export async function stuckShown(events: string[], stateDir: string, namespace: string): Promise<StuckShown> {
  const shown: StuckShown = { events: new Set(), listed: new Set() };
  for (const e of events) {
    const { detailType, detail } = JSON.parse(e) as { detailType: string; detail: Record<string, string> };
    if (detailType === 'FeatureTransitionChanged' && detail.phase === 'stuck')
      shown.events.add(`${detail.cluster} ${detail.namespace}/${detail.feature}`);
  }
  const list = await runCli(
    ['features', 'list', '--namespace', namespace, '--offline', '-o', 'json'],
    stateDir,
  );
  if (list.code !== 0) throw new Error(`features list failed (${list.code}): ${list.output.slice(0, 300)}`);
  const rows = (JSON.parse(list.output) as { features: FeatureJson[] }).features;
  for (const f of rows) if (f.tasks[0]?.stuck) shown.listed.add(`${f.cluster} ${f.feature}`);
  return shown;
}

/** The failing declaration's failed attempts over the fleet, and how many of its transitions were shown stuck. */
export async function failingAttempts(db: DynamoDBDocumentClient, table: string, clusters: string[]) {
  const store = new DynamoFeatureStore(db, table);
  const ref = parseRef(FAILING_FEATURE);
  const records = (await Promise.all(clusters.map((c) => store.get(c, ref)))).filter(
    (r): r is FeatureRecord => r !== undefined,
  );
  return {
    attempts: records.reduce((a, r) => a + (r.tasks[0]?.attempts ?? 0), 0),
    shownStuck: (shown: StuckShown | undefined) =>
      records.filter((r) => {
        const key = `${r.cluster} ${refKey(r)}`;
        return r.tasks[0]?.stuck && shown?.events.has(key) && shown.listed.has(key);
      }).length,
  };
}
