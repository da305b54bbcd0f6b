/**
 * The owner Lease on the cluster's clock, judged by a real kube-apiserver (issue 34, defect 4): a
 * second control plane whose clock runs 20 minutes ahead neither takes a lease its rightful owner
 * renewed a moment ago nor stamps one into the cluster's future; the owner keeps renewing it.
 */
import { expect, it } from 'vitest';
import { holdOwnerLease, readOwnerLease } from '../../shared/fleet/owner-lease.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const MINUTE = 60_000;

describeRealApiserver('the owner lease keeps the cluster’s time', (server) => {
  it('a control plane 20 minutes ahead is refused, and writes nothing from its future', async () => {
    const client = ClusterClient.fromKubeconfig(server.api().adminKubeconfig, {
      cluster: 'lease',
      context: 'envtest',
      retry: { maxAttempts: 1 },
    });
    const owner = await holdOwnerLease(client, 'local:/owner', Date.now());
    expect(owner.held).toBe(true);
    const ahead = () => Date.now() + 20 * MINUTE;
    const second = await holdOwnerLease(client, 'local:/second', ahead(), { wall: ahead });
    expect(second).toMatchObject({ held: false, before: { kind: 'other', holder: 'local:/owner' } });
    // Once it has it (--force), what it writes is on the cluster's clock, not 20 minutes ahead.
    const forced = await holdOwnerLease(client, 'local:/second', ahead(), { wall: ahead, force: true });
    expect(forced.held).toBe(true);
    const lease = (await readOwnerLease(client))!;
    expect(lease.holder).toBe('local:/second');
    expect(Math.abs(lease.renewedMs - Date.now())).toBeLessThan(15_000);
    // So the rightful owner, taking it back on its own right clock, is not locked out for 35 minutes.
    const back = await holdOwnerLease(client, 'local:/owner', Date.now() + 16 * MINUTE, { force: false });
    expect(back.held).toBe(true);
    await client.close();
  });
});
