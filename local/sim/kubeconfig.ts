/** The kubeconfig for a simulator: one cluster, user and context per simulated cluster, all named alike. */
import yaml from 'yaml';

export interface KubeconfigEntry {
  name: string;
  server: string;
  caPem: string;
  token?: string;
  /** A client certificate instead of a token. */
  client?: { certPem: string; keyPem: string };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

export function kubeconfigYaml(entries: KubeconfigEntry[], currentContext = entries[0]?.name ?? ''): string {
  return yaml.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: entries.map((e) => ({
      name: e.name,
      cluster: { server: e.server, 'certificate-authority-data': b64(e.caPem) },
    })),
    contexts: entries.map((e) => ({ name: e.name, context: { cluster: e.name, user: e.name } })),
    'current-context': currentContext,
    preferences: {},
    users: entries.map((e) => ({
      name: e.name,
      user: e.client
        ? { 'client-certificate-data': b64(e.client.certPem), 'client-key-data': b64(e.client.keyPem) }
        : { token: e.token },
    })),
  });
}
