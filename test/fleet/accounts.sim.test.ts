/**
 * A fleet across accounts and control planes, through the local runtime's real handlers: a cluster
 * whose role cannot be assumed is reported unreachable with STS's code and message while the rest of
 * the fleet is inventoried; registration through such a role writes nothing; dispatch serves only the
 * clusters this control plane owns, and ownership moves only by a conditional write.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { DEFAULTS } from '../../shared/platform/config.js';
import { simpleKubeconfig } from '../k8s/helpers.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { type LocalSts, startLocalSts } from '../support/sts-server.js';

const SECRET = 'fleetTestSecretKey/0123456789abcdefGHIJKLmn';
const ROLE = 'arn:aws:iam::222233334444:role/fleetscope-access';
const DENIED = `User: arn:aws:sts::111122223333:assumed-role/fleetscope-inventory/x is not authorized to perform: sts:AssumeRole on resource: ${ROLE}`;
const ENV_KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL_STS'] as const;

let sim: Simulator;
let sts: LocalSts;
let runtime: LocalRuntime;
let dir: string;
let kubeconfig: string;
let eksKubeconfig: string;
const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-accounts-'));
  sim = await startSimulator({ clusters: [{ name: 'home', nodes: 2 }] });
  kubeconfig = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfig);
  // An EKS cluster in another account, reached through a role (the server is never contacted: STS refuses).
  eksKubeconfig = join(dir, 'eks.yaml');
  await writeFile(
    eksKubeconfig,
    simpleKubeconfig({
      name: 'remote',
      server: sim.cluster('home').server,
      caData: Buffer.from(sim.cluster('home').caData).toString('base64'),
      user: {
        exec: {
          command: 'aws',
          args: ['--region', 'eu-west-1', 'eks', 'get-token', '--cluster-name', 'remote', '--role-arn', ROLE],
        },
      },
    }),
  );
  sts = await startLocalSts(SECRET);
  sts.answer = () => ({ status: 403, code: 'AccessDenied', message: DENIED });
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'AKIAFLEETTEST0000001',
    AWS_SECRET_ACCESS_KEY: SECRET,
    AWS_ENDPOINT_URL_STS: sts.endpoint,
  });
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
});
afterAll(async () => {
  await resetClusterConnector();
  await runtime?.stop();
  await sim?.stop();
  await sts?.stop();
  for (const k of ENV_KEYS)
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  await rm(dir, { recursive: true, force: true });
});

const store = () => new DynamoRegistry(runtime.db, runtime.table);
const cluster = (
  name: string,
  kubeconfigPath: string,
  context: string,
  owner?: string,
): RegisteredCluster => ({
  name,
  kubeconfig: { kind: 'file', path: kubeconfigPath, context },
  labels: {},
  registeredAt: new Date().toISOString(),
  ...(owner ? { owner } : {}),
});

describe('a fleet across accounts', () => {
  it('reports a cluster whose role is refused as unreachable with the STS code and message; the others go on', async () => {
    await store().add(cluster('home', kubeconfig, 'home'));
    await store().add(cluster('remote', eksKubeconfig, 'remote'));
    await runtime.invoker.invokeAsync('dispatch', { capability: 'inventory' }, 'test');
    await runtime.bus.drain();

    const statuses = await store().statuses(['home', 'remote']);
    expect(statuses.get('home')).toMatchObject({ reachable: true, nodeCount: 2 });
    const remote = statuses.get('remote')!;
    expect(remote.reachable).toBe(false);
    expect(remote.error).toContain(`cannot assume role ${ROLE} for "remote": AccessDenied: ${DENIED}`);
    expect(remote.error).not.toContain(SECRET);
    // The request STS saw was signed with the control plane's key, for the cluster's session.
    expect(sts.received.at(-1)).toMatchObject({
      signatureValid: true,
      accessKeyId: 'AKIAFLEETTEST0000001',
      params: { RoleArn: ROLE, RoleSessionName: 'fleetscope-remote' },
    });
    expect(runtime.invoker.deadLetters).toEqual([]);
  });

  it('refuses a registration whose role cannot be assumed, and writes nothing', async () => {
    // In this process the CLI works on the runtime's table (FLEETSCOPE_TABLE is set).
    const stateDir = join(dir, 'state');
    const run = await runFleetscopeInProcess(
      [
        'cluster',
        'register',
        '--name',
        'remote-2',
        '--kubeconfig',
        eksKubeconfig,
        '--assume-role',
        'arn:aws:iam::222233334444:role/fleetscope-other',
        '--external-id',
        'ext-secret-42',
      ],
      { stateDir },
    );
    expect(run.code).not.toBe(0);
    expect(run.err).toContain('AccessDenied');
    expect(run.err).toContain('fleetscope-other (with an external ID)');
    expect(run.err).not.toContain('ext-secret-42');
    expect(sts.received.at(-1)?.params).toMatchObject({ ExternalId: 'ext-secret-42' });
    expect(await store().get('remote-2')).toBeUndefined();
  });

  it('verifies a cluster through the verify function, as the workers reach it (what cluster register --aws calls)', async () => {
    const ok = await runtime.invoker.invoke('verify', {
      name: 'home-2',
      kubeconfig: { kind: 'file', path: kubeconfig, context: 'home' },
    });
    expect(ok).toEqual({ kubeSystemUid: sim.cluster('home').kubeSystemUid });
    const refused = (await runtime.invoker.invoke('verify', {
      name: 'remote-3',
      kubeconfig: {
        kind: 'file',
        path: eksKubeconfig,
        assumeRole: { roleArn: ROLE, externalId: 'ext-secret-43' },
      },
    })) as { error: string };
    expect(refused.error).toContain('AccessDenied');
    expect(refused.error).not.toContain('ext-secret-43');
    const bad = (await runtime.invoker.invoke('verify', {
      name: 'x',
      kubeconfig: { kind: 'file', path: kubeconfig, assumeRole: { roleArn: 'not-an-arn' } },
    })) as { error: string };
    expect(bad.error).toContain('is not an IAM role ARN');
  });

  it('dispatches only the clusters this control plane owns; ownership moves by conditional write', async () => {
    await store().add(cluster('theirs', kubeconfig, 'home', 'fleetscope@eu-west-1'));
    await store().add(cluster('mine', kubeconfig, 'home', DEFAULTS.controlPlane));
    const before = runtime.bus.log.length;
    // 'fleet' is a capability no worker rule listens to: only the fan-out is exercised.
    await runtime.invoker.invoke('dispatch', { capability: 'fleet' });
    const requested = runtime.bus.log
      .slice(before)
      .filter((e) => e.detailType === 'ClusterWorkRequested')
      .map((e) => (e.detail as { cluster: string }).cluster)
      .sort();
    expect(requested).toEqual(['home', 'mine', 'remote']);

    expect(await store().transferOwner('theirs', 'fleetscope@us-east-1', DEFAULTS.controlPlane)).toBe(false);
    expect(await store().transferOwner('theirs', 'fleetscope@eu-west-1', DEFAULTS.controlPlane)).toBe(true);
    expect((await store().get('theirs'))?.owner).toBe(DEFAULTS.controlPlane);
    // The loser of a race finds the owner changed.
    expect(await store().transferOwner('theirs', 'fleetscope@eu-west-1', 'fleetscope@ap-south-1')).toBe(
      false,
    );

    // From the command line: adopt names what it found, and refuses a stale --from.
    await store().add(cluster('failover', kubeconfig, 'home', 'fleetscope@eu-west-1'));
    const stale = await runFleetscopeInProcess(['cluster', 'adopt', '--name', 'failover', '--from', 'x@y']);
    expect(stale.code).not.toBe(0);
    expect(stale.err).toContain('owned by fleetscope@eu-west-1, not x@y');
    const adopted = await runFleetscopeInProcess(['cluster', 'adopt', '--name', 'failover']);
    expect(adopted.out).toBe(`cluster failover: owner fleetscope@eu-west-1 -> ${DEFAULTS.controlPlane}`);
    expect((await store().get('failover'))?.owner).toBe(DEFAULTS.controlPlane);
  });
});
