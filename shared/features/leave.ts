/**
 * What a deregistration removes of the feature lifecycle from the cluster it leaves (issue 34, 11): the
 * Feature objects fleetscope mirrored (label app.kubernetes.io/managed-by=fleetscope), then the Feature
 * CRD, only when fleetscope created it and no Feature object is left that is not its own (deleting a CRD
 * deletes every object of its kind). The caller holds the cluster's owner Lease, so the mirrored
 * objects are this control plane's: the owner is the only one that writes them. Each delete carries
 * the object's uid and resourceVersion as read; run again, it finds nothing left and writes nothing.
 * The objects a feature's own steps created stay (deregistration does not run its Off steps): they
 * carry ./harmless.ts OWNER_LABEL, by which the operator lists and removes them.
 */
import { FEATURE_API_VERSION, FEATURE_CRD } from './crd.js';
import type { ObjectsApi } from './objects.js';

const MANAGED = 'app.kubernetes.io/managed-by=fleetscope';
const FEATURES = { apiVersion: FEATURE_API_VERSION, resource: FEATURE_CRD.plural };
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  resource: 'customresourcedefinitions',
  name: FEATURE_CRD.crdName,
};

export interface FeatureMirrorRemoval {
  /** Feature objects deleted by this run. */
  deleted: number;
  /** The CRD: deleted now, absent already, or kept (why). */
  crd: 'deleted' | 'absent' | { kept: string };
}

export async function removeFeatureMirror(api: ObjectsApi): Promise<FeatureMirrorRemoval> {
  let deleted = 0;
  for (const o of await api.list({ ...FEATURES, selector: MANAGED }))
    if (await api.delete({ ...FEATURES, selector: MANAGED }, o)) deleted++;
  const crd = (await api.list(CRD))[0];
  if (!crd) return { deleted, crd: 'absent' };
  if (crd.metadata?.labels?.['app.kubernetes.io/managed-by'] !== 'fleetscope')
    return { deleted, crd: { kept: `${FEATURE_CRD.crdName} was not created by fleetscope (no ${MANAGED})` } };
  const others = await api.list(FEATURES);
  if (others.length)
    return {
      deleted,
      crd: {
        kept: `${others.length} Feature object(s) not fleetscope's still use ${FEATURE_CRD.crdName} (${others
          .slice(0, 3)
          .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)
          .join(', ')})`,
      },
    };
  return { deleted, crd: (await api.delete(CRD, crd)) ? 'deleted' : 'absent' };
}
