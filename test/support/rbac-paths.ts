/** Where `fleetscope rbac`'s manifests are POSTed: the collection path of each object, by kind. */
const PLURAL: Record<string, string> = {
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
};

export function collectionPath(obj: {
  apiVersion: string;
  kind: string;
  metadata: { namespace?: string };
}): string {
  const base = obj.apiVersion === 'v1' ? '/api/v1' : `/apis/${obj.apiVersion}`;
  const ns = obj.metadata.namespace ? `/namespaces/${obj.metadata.namespace}` : '';
  return `${base}${ns}/${PLURAL[obj.kind]}`;
}
