/**
 * Claims in a cluster: ClusterProperty objects (about.k8s.io) and, on OCM-managed clusters, ClusterClaim
 * objects, through the ClusterClient (timeouts, retries, pagination, redacted errors). Custom resources
 * take merge patches only (strategic merge is 415 on CRs) and no unconditional PUT, so updates are merge
 * patches of `spec.value` and the managed-by label.
 */
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import {
  CLUSTER_PROPERTY,
  type ClaimResource,
  claimObject,
  clusterPropertyCrd,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OCM_CLUSTER_CLAIM,
  pickVersion,
} from './crd.js';
import type { ObservedClaim, SyncOp } from './identity.js';

interface KObject {
  metadata?: { name?: string; labels?: Record<string, string>; uid?: string };
  spec?: { value?: unknown };
  status?: { conditions?: { type?: string; status?: string }[] };
}

interface CrdObject extends KObject {
  spec?: { value?: unknown; versions?: { name?: string; served?: boolean }[] };
}

const is = (err: unknown, status: number) => err instanceof ClusterAccessError && err.status === status;

/** One kind of claim object (ClusterProperty or ClusterClaim) in one cluster, at one served version. */
export class ClaimObjects {
  constructor(
    private readonly client: ClusterClient,
    readonly resource: ClaimResource,
    readonly version: string,
  ) {}

  private get ref() {
    return { group: this.resource.group, version: this.version, plural: this.resource.plural };
  }

  async list(): Promise<ObservedClaim[]> {
    const items = await this.client.listAll<KObject>(`list ${this.resource.plural}`, (page) =>
      this.client.custom.listClusterCustomObject({ ...this.ref, ...page }),
    );
    return items
      .filter((o) => typeof o.metadata?.name === 'string')
      .map((o) => ({
        name: o.metadata!.name!,
        value: typeof o.spec?.value === 'string' ? o.spec.value : undefined,
        managed: o.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE,
      }));
  }

  async apply(op: SyncOp): Promise<void> {
    switch (op.kind) {
      case 'create':
        try {
          await this.client.call(
            `create ${this.resource.kind} ${op.name}`,
            () =>
              this.client.custom.createClusterCustomObject({
                ...this.ref,
                body: claimObject(this.resource, this.version, op.name, op.value),
              }),
            { idempotent: false, expected: [409] },
          );
        } catch (err) {
          if (!is(err, 409)) throw err;
          await this.patch(op.name, op.value); // created meanwhile (another sync): converge on the value
        }
        return;
      case 'update':
        try {
          await this.patch(op.name, op.value, [404]);
        } catch (err) {
          if (!is(err, 404)) throw err;
          await this.apply({ kind: 'create', name: op.name, value: op.value });
        }
        return;
      case 'delete':
        try {
          await this.client.call(
            `delete ${this.resource.kind} ${op.name}`,
            () => this.client.custom.deleteClusterCustomObject({ ...this.ref, name: op.name }),
            { expected: [404] },
          );
        } catch (err) {
          if (!is(err, 404)) throw err;
        }
        return;
    }
  }

  private patch(name: string, value: string, expected?: number[]) {
    return this.client.patch(
      `patch ${this.resource.kind} ${name}`,
      'merge',
      (options) =>
        this.client.custom.patchClusterCustomObject(
          {
            ...this.ref,
            name,
            body: { metadata: { labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } }, spec: { value } },
          },
          options,
        ),
      { expected },
    );
  }
}

export type CrdState = 'present' | 'created' | 'absent';

/** The claims-related API of one cluster. */
export class ClusterClaimsApi {
  constructor(
    readonly client: ClusterClient,
    private readonly opts: { crdWaitMs?: number; sleep?: (ms: number) => Promise<void> } = {},
  ) {}

  get cluster(): string {
    return this.client.cluster;
  }

  /** The kube-system namespace UID: the KEP's recommended cluster ID (unique, immutable for the cluster's life). */
  async kubeSystemUid(): Promise<string> {
    const ns = await this.client.call('read namespace kube-system', () =>
      this.client.core.readNamespace({ name: 'kube-system' }),
    );
    const uid = ns.metadata?.uid;
    if (!uid)
      throw new ClusterAccessError({
        cluster: this.cluster,
        operation: 'read namespace kube-system',
        kind: 'internal',
        retryable: false,
        detail: 'the kube-system namespace has no metadata.uid',
      });
    return uid;
  }

  private async readCrd(name: string): Promise<CrdObject | undefined> {
    try {
      return (await this.client.call(
        `read CRD ${name}`,
        () => this.client.apiextensions.readCustomResourceDefinition({ name }),
        { expected: [404] },
      )) as CrdObject;
    } catch (err) {
      if (is(err, 404)) return undefined;
      throw err;
    }
  }

  private served(crd: CrdObject): string[] {
    return (crd.spec?.versions ?? []).filter((v) => v.served && v.name).map((v) => v.name!);
  }

  /**
   * ClusterProperty objects, creating the CRD first when it is absent and `createCrd` allows it.
   * Returns undefined objects when the CRD is absent (and may not be created) or serves no known version.
   */
  async clusterProperties(createCrd: boolean): Promise<{ crd: CrdState; objects?: ClaimObjects }> {
    let crd = await this.readCrd(CLUSTER_PROPERTY.crdName);
    let state: CrdState = 'present';
    if (!crd) {
      if (!createCrd) return { crd: 'absent' };
      try {
        crd = (await this.client.call(
          'create CRD clusterproperties.about.k8s.io',
          () =>
            this.client.apiextensions.createCustomResourceDefinition({ body: clusterPropertyCrd() as never }),
          { idempotent: false, expected: [409] },
        )) as CrdObject;
        state = 'created';
      } catch (err) {
        if (!is(err, 409)) throw err;
        crd = await this.readCrd(CLUSTER_PROPERTY.crdName);
        if (!crd) return { crd: 'absent' };
      }
    }
    const version = pickVersion(CLUSTER_PROPERTY, this.served(crd));
    if (!version) return { crd: 'absent' };
    const objects = new ClaimObjects(this.client, CLUSTER_PROPERTY, version);
    if (state === 'created') await this.waitServed(objects);
    return { crd: state, objects };
  }

  /** OCM ClusterClaim objects, when the cluster serves them (fleetscope never installs OCM's CRD). */
  async ocmClusterClaims(): Promise<ClaimObjects | undefined> {
    const crd = await this.readCrd(OCM_CLUSTER_CLAIM.crdName);
    if (!crd) return undefined;
    const version = pickVersion(OCM_CLUSTER_CLAIM, this.served(crd));
    return version ? new ClaimObjects(this.client, OCM_CLUSTER_CLAIM, version) : undefined;
  }

  /**
   * A new CRD is served once the apiserver has established it, which takes a moment: list the objects
   * until the resource answers (not 404), for at most `crdWaitMs`, then go on (the next sync retries).
   */
  private async waitServed(objects: ClaimObjects): Promise<void> {
    const deadline = Date.now() + (this.opts.crdWaitMs ?? 10_000);
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    for (;;) {
      try {
        await objects.list();
        return;
      } catch (err) {
        if (!is(err, 404) || Date.now() >= deadline) return;
        await sleep(250);
      }
    }
  }
}
