/**
 * Nothing of a deregistered cluster is inherited by the next one of that name (issue 34, defect 11): a
 * deregistration killed after the registration was removed but before its event was handled left every
 * feature record, and a new cluster registered under the name inherited `balloons desired off`. The
 * records go before the registration does, and a registration forgets any left under its name. So do
 * the balloons' (their policies, requests and state): a cluster registered again after a killed
 * deregistration kept its balloons at the floor its turn-off left them at, with the old policy.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openContext } from '../../cli/context.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { runFleetscopeInProcess } from '../support/cli.js';

let sim: Simulator;
let dir: string;
const run = (...args: string[]) => runFleetscopeInProcess(args, { stateDir: join(dir, 'state') });
/** What the balloons keep about the cluster, as the state directory holds it. */
const balloonItems = async () => {
  const ctx = await openContext({ 'state-dir': join(dir, 'state') });
  try {
    return await new DynamoBalloonStore(ctx.db, ctx.table).load('tp');
  } finally {
    await ctx.close();
  }
};
const putBalloonPolicy = async () => {
  const ctx = await openContext({ 'state-dir': join(dir, 'state') });
  const policy = validatePolicy({ name: 'old', selector: 'pool=old', max: { cpu: '2', memory: '4Gi' } });
  await new DynamoBalloonStore(ctx.db, ctx.table).putPolicy('tp', policy);
  await ctx.close();
};
const balloons = async () =>
  JSON.parse((await run('features', 'get', '--cluster', 'tp', '--feature', 'balloons', '-o', 'json')).out);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-features-deregister-'));
  sim = await startSimulator({ clusters: [{ name: 'tp', nodes: 1, seed: 13 }] });
  await sim.writeKubeconfig(join(dir, 'kubeconfig.yaml'));
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('a new cluster under a deregistered name starts from its defaults', { timeout: 120_000 }, async () => {
  const register = () =>
    run('cluster', 'register', '--name', 'tp', '--kubeconfig', join(dir, 'kubeconfig.yaml'));
  expect((await register()).code).toBe(0);
  await run('features', 'set', '--cluster', 'tp', '--feature', 'balloons', '--desired', 'off');
  expect((await balloons()).desired).toBe('off');
  await putBalloonPolicy();
  // The deregistration killed between removing the registration and handling its event.
  const ctx = await openContext({ 'state-dir': join(dir, 'state') });
  await ctx.registry.remove('tp');
  await ctx.close();
  expect((await register()).code).toBe(0);
  const fresh = await balloons();
  expect(fresh.desired ?? 'default').toBe('default');
  expect((await balloonItems()).policies).toEqual([]);
  // And a normal deregistration forgets them itself, before the registration goes.
  await run('features', 'set', '--cluster', 'tp', '--feature', 'balloons', '--desired', 'off');
  await putBalloonPolicy();
  expect((await run('cluster', 'deregister', '--name', 'tp')).code).toBe(0);
  const ctx2 = await openContext({ 'state-dir': join(dir, 'state') });
  const { DynamoFeatureStore } = await import('../../shared/features/store-dynamo.js');
  expect(await new DynamoFeatureStore(ctx2.db, ctx2.table).clusterViews('tp')).toEqual(new Map());
  await ctx2.close();
  expect(await balloonItems()).toEqual({ policies: [], requests: [] });
});
