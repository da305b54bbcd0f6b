/** Test helpers for the cluster access layer: kubeconfig text builders and output capture. */
import { stringify } from 'yaml';

export const FAKE_CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBfakefakefake\n-----END CERTIFICATE-----\n';
export const FAKE_CA_B64 = Buffer.from(FAKE_CA_PEM).toString('base64');

export interface KcCluster {
  name: string;
  server?: string;
  caData?: string;
  extra?: Record<string, unknown>;
}
export interface KcUser {
  name: string;
  user: Record<string, unknown>;
}
export interface KcContext {
  name: string;
  cluster: string;
  user: string;
  namespace?: string;
}

export function kubeconfigYaml(opts: {
  clusters: KcCluster[];
  users: KcUser[];
  contexts: KcContext[];
  current?: string;
}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: opts.clusters.map((c) => ({
      name: c.name,
      cluster: {
        ...(c.server !== undefined ? { server: c.server } : {}),
        ...(c.caData !== undefined ? { 'certificate-authority-data': c.caData } : {}),
        ...(c.extra ?? {}),
      },
    })),
    users: opts.users,
    contexts: opts.contexts.map((c) => ({
      name: c.name,
      context: { cluster: c.cluster, user: c.user, ...(c.namespace ? { namespace: c.namespace } : {}) },
    })),
    ...(opts.current ? { 'current-context': opts.current } : {}),
  });
}

/** A one-context kubeconfig. */
export function simpleKubeconfig(opts: {
  name?: string;
  server?: string;
  caData?: string;
  user?: Record<string, unknown>;
  clusterExtra?: Record<string, unknown>;
}): string {
  const name = opts.name ?? 'c1';
  return kubeconfigYaml({
    clusters: [
      {
        name,
        server: opts.server ?? 'https://127.0.0.1:6443',
        caData: opts.caData ?? FAKE_CA_B64,
        extra: opts.clusterExtra,
      },
    ],
    users: [{ name: `${name}-user`, user: opts.user ?? { token: 'test-token-123456' } }],
    contexts: [{ name, cluster: name, user: `${name}-user` }],
    current: name,
  });
}

/** Captures everything written to stdout/stderr and console.* while `fn` runs. */
export async function captureOutput<T>(fn: () => Promise<T>): Promise<{ result: T; output: string }> {
  const chunks: string[] = [];
  const origOut = process.stdout.write.bind(process.stdout);
  const origErr = process.stderr.write.bind(process.stderr);
  const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const origConsole = methods.map((m) => console[m]);
  const sink = (chunk: unknown): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    return true;
  };
  process.stdout.write = sink as typeof process.stdout.write;
  process.stderr.write = sink as typeof process.stderr.write;
  for (const m of methods) console[m] = (...args: unknown[]) => void chunks.push(args.map(String).join(' '));
  try {
    const result = await fn();
    return { result, output: chunks.join('') };
  } finally {
    process.stdout.write = origOut;
    process.stderr.write = origErr;
    methods.forEach((m, i) => {
      console[m] = origConsole[i]!;
    });
  }
}
