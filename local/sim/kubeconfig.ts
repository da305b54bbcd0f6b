/** The kubeconfig for a simulator: one cluster, user and context per simulated cluster, all named alike. */
import yaml from 'yaml';

export interface KubeconfigEntry {
  name: string;
  server: string;
  caPem: string;
  token: string;
}

export function kubeconfigYaml(entries: KubeconfigEntry[], currentContext = entries[0]?.name ?? ''): string {
  return yaml.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: entries.map((e) => ({
      name: e.name,
      cluster: { server: e.server, 'certificate-authority-data': Buffer.from(e.caPem).toString('base64') },
    })),
    contexts: entries.map((e) => ({ name: e.name, context: { cluster: e.name, user: e.name } })),
    'current-context': currentContext,
    preferences: {},
    users: entries.map((e) => ({ name: e.name, user: { token: e.token } })),
  });
}
