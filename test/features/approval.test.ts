/**
 * An approval names the wave that was reviewed (issue 34, defect 9): a second `rollout approve` during
 * wave 2's pause no longer approves wave 3, an approval given before a wave's gate is shown is refused
 * rather than kept to open the gate on arrival, and approving the gate on show opens that one gate.
 * On the in-memory stores (no DynamoDB-protocol server).
 */
import { expect, it } from 'vitest';
import { FeatureCatalog } from '../../shared/features/catalog.js';
import { decideRollout, type Rollout } from '../../shared/features/rollout.js';
import { approveWave, type RolloutPorts } from '../../shared/features/rollout-runner.js';
import { MemoryRolloutStore } from '../../shared/features/rollout-store-memory.js';
import { MemoryFeatureStore } from '../../shared/features/store-memory.js';
import { testRollout } from './fixtures.js';

const T0 = Date.UTC(2026, 11, 2);
let now = T0;
// The in-memory adapters: the runner's unit tests need no DynamoDB-protocol server.
const rollouts = new MemoryRolloutStore();
const store = new MemoryFeatureStore();
const ports = (): RolloutPorts => ({
  rollouts,
  store,
  catalog: new FeatureCatalog([]),
  registry: { list: async () => [], getStatus: async () => undefined },
  now: () => now,
});
const rollout = (id: string, over: Partial<Rollout> = {}) => testRollout(T0, { id, approval: true, ...over });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'approved',
    (e: Error) => e.message,
  );

it('an approval before the gate is shown is refused, not kept', async () => {
  const r = rollout('early'); // wave 1 started, not reached yet
  await ports().rollouts.create(r);
  expect(await refusal(approveWave(ports(), 'early', 'op', 2))).toMatch(
    /wave 2 is not waiting for approval yet/,
  );
  const stored = (await ports().rollouts.get('early'))!;
  expect(stored.approvedWave).toBeUndefined();
  // Wave 1 arrives and its pause ends: the gate is shown, not opened by anything given before.
  const reached = { ...stored, waveReachedAt: T0 + 10_000 };
  const at = T0 + 10_000 + 60_000;
  const seen = [{ cluster: 'a', state: 'On' as const, desired: 'on' as const, reachable: true }];
  expect(decideRollout(reached, seen, at)).toMatchObject({
    kind: 'none',
    why: /waiting for approval of wave 2/,
  });
});

it('a second approve during the next pause does not approve the wave after it', async () => {
  // Wave 2 was approved and started; it is in its pause now.
  now = T0 + 200_000;
  await ports().rollouts.create(
    rollout('twice', { wave: 1, approvedWave: 0, waveStartedAt: T0 + 100_000, waveReachedAt: T0 + 180_000 }),
  );
  expect(await refusal(approveWave(ports(), 'twice', 'op', 2))).toMatch(
    /wave 2 is not the one waiting: the next wave is 3 \(wave 2 already started\)/,
  );
  expect(await refusal(approveWave(ports(), 'twice', 'op', 3))).toMatch(
    /wave 3 is not waiting for approval yet/,
  );
  expect(await refusal(approveWave(ports(), 'twice', 'op'))).toMatch(
    /an approval names the wave it approves: --wave 3/,
  );
  expect((await ports().rollouts.get('twice'))!.approvedWave).toBe(0);
  // Once its gate shows (the pause is over), approving wave 3 opens it.
  now = T0 + 180_000 + 60_000;
  expect((await approveWave(ports(), 'twice', 'op', 3)).approvedWave).toBe(1);
});
