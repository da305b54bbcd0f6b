/**
 * The claims steps both least-privilege suites (simulator and real apiserver) run under the generated
 * RBAC: registration (creating the CRDs), membership, custom claims, then drift by an admin (an edited
 * claim, a deleted one) repaired by the next check. Returns what the cluster then holds.
 */
import { expect } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { CLUSTER_PROPERTY, OCM_CLUSTER_CLAIM } from '../../shared/claims/crd.js';
import { deleteCustomClaim, joinClusterSet, setCustomClaim } from '../../shared/claims/membership.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { deps } from '../../shared/platform/deps.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers of arbitrary shape
type Admin = (method: string, path: string, body?: unknown, contentType?: string) => Promise<any>;

export interface ClaimsDriftHooks {
  runtime: LocalRuntime;
  admin: Admin;
  /** The bus events the claims function gets: the cluster registered, and a scheduled check. */
  registered: (cluster: string) => unknown;
  check: (cluster: string) => unknown;
}

export async function claimsThroughDrift(h: ClaimsDriftHooks, c: string) {
  const { runtime, admin } = h;
  const ports = {
    store: new DynamoClaimStore(runtime.db, runtime.table),
    registry: new DynamoRegistry(runtime.db, runtime.table),
    publisher: deps().publisher,
  };
  await runtime.invoker.invoke('claims', h.registered(c));
  await joinClusterSet(ports, c, 'blue');
  await setCustomClaim(ports, c, 'zone.example.com', 'eu-1a');
  await setCustomClaim(ports, c, 'gone.example.com', 'x');
  await runtime.bus.drain();
  await deleteCustomClaim(ports, c, 'gone.example.com');
  await runtime.bus.drain();
  const properties = `/apis/${CLUSTER_PROPERTY.group}/v1beta1/clusterproperties`;
  await admin(
    'PATCH',
    `${properties}/zone.example.com`,
    { spec: { value: 'tampered' } },
    'application/merge-patch+json',
  );
  await admin('DELETE', `${properties}/clusterset.k8s.io`);
  await runtime.invoker.invoke('claims', h.check(c));
  const values = (list: { items: { metadata: { name: string }; spec: { value: string } }[] }) =>
    Object.fromEntries(list.items.map((o) => [o.metadata.name, o.spec.value]));
  return {
    properties: values(await admin('GET', properties)),
    ocm: values(await admin('GET', `/apis/${OCM_CLUSTER_CLAIM.group}/v1alpha1/clusterclaims`)),
    syncState: (await ports.store.getSyncStatus(c))?.state,
  };
}

/** What claimsThroughDrift must leave: the identity, the set, the custom claim (mirrored to OCM), repaired. */
export function expectRepaired(
  got: Awaited<ReturnType<typeof claimsThroughDrift>>,
  kubeSystemUid: string,
): void {
  expect(got.properties).toMatchObject({
    'id.k8s.io': kubeSystemUid,
    'clusterset.k8s.io': 'blue',
    'zone.example.com': 'eu-1a',
  });
  expect(got.properties['gone.example.com']).toBeUndefined();
  expect(got.ocm['zone.example.com']).toBe('eu-1a');
  expect(got.syncState).toMatch(/in-sync|repaired/);
}
