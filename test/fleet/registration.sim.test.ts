/** Registration rules over real HTTP: one physical cluster (kube-system UID) is registered once. */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { clusterAccess, resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { deregisterCluster, registerCluster } from '../../shared/fleet/register.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { deps } from '../../shared/platform/deps.js';

let sim: Simulator;
let runtime: LocalRuntime;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-registration-'));
  sim = await startSimulator({ clusters: [{ name: 'one', nodes: 1 }] });
  kubeconfig = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfig);
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
});
afterAll(async () => {
  await resetClusterConnector();
  await runtime?.stop();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

function ports() {
  const access = clusterAccess();
  return {
    store: new DynamoRegistry(runtime.db, runtime.table),
    publisher: deps().publisher,
    verify: (n: string, r: Parameters<typeof access.verify>[1]) => access.verify(n, r),
  };
}
const ref = () => ({ kind: 'file' as const, path: kubeconfig, context: 'one' });

describe('registration', () => {
  it('records the kube-system UID and refuses the same cluster under a second name, writing nothing', async () => {
    const first = await registerCluster({ name: 'first', kubeconfig: ref() }, ports());
    expect(first.kubeSystemUid).toBe(sim.cluster('one').kubeSystemUid);
    await expect(registerCluster({ name: 'second', kubeconfig: ref() }, ports())).rejects.toThrow(
      /already registered as "first".*kube-system UID/,
    );
    expect(await ports().store.get('second')).toBeUndefined();
  });

  it('frees the cluster on deregistration, so it can be registered again under another name', async () => {
    await deregisterCluster('first', ports());
    const again = await registerCluster({ name: 'renamed', kubeconfig: ref() }, ports());
    expect(again.name).toBe('renamed');
    await deregisterCluster('renamed', ports());
  });

  it('takes over a guard left by a crash between the guard and the registration', async () => {
    const store = ports().store;
    // A registration of "ghost" that crashed after taking the guard: no registration item exists.
    expect(await store.claimUid(sim.cluster('one').kubeSystemUid, 'ghost')).toBe(true);
    const c = await registerCluster({ name: 'survivor', kubeconfig: ref() }, ports());
    expect(await store.uidHolder(c.kubeSystemUid!)).toBe('survivor');
  });
});
