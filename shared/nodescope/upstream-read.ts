/**
 * Finding upstream VPA's components in a cluster, with two reads per cycle (and only in a cycle with a
 * VPA that asks fleetscope for something): the Deployments of kube-system (where upstream's manifests
 * and most charts put `vpa-recommender`, `vpa-updater` and `vpa-admission-controller`; known by name or
 * by image), and the MutatingWebhookConfiguration `vpa-webhook-config` the admission controller
 * registers for itself wherever it runs. A Deployment scaled to zero is not running. A read that is
 * forbidden leaves upstream `unknown`, said in the summary; the cycle goes on.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import type { RawReader } from '../k8s/raw-reader.js';
import {
  UPSTREAM_NAMESPACE,
  UPSTREAM_WEBHOOK,
  type UpstreamComponent,
  type UpstreamRole,
  type UpstreamVpa,
} from './upstream-vpa.js';

interface DeploymentObject {
  metadata?: { name?: string; namespace?: string };
  spec?: {
    replicas?: number;
    template?: { spec?: { containers?: { image?: string; args?: string[]; command?: string[] }[] } };
  };
}

interface WebhookConfig {
  webhooks?: { clientConfig?: { service?: { namespace?: string; name?: string } } }[];
}

const ROLES: readonly UpstreamRole[] = ['recommender', 'updater', 'admission-controller'];

/** The role of an upstream Deployment, by its name or its containers' images. */
function roleOf(d: DeploymentObject): UpstreamRole | undefined {
  const name = d.metadata?.name ?? '';
  for (const role of ROLES) if (name === `vpa-${role}`) return role;
  for (const c of d.spec?.template?.spec?.containers ?? [])
    for (const role of ROLES) if (new RegExp(`/vpa-${role}(:|@|$)`).test(c.image ?? '')) return role;
  return undefined;
}

/** `--recommender-name=X` or `--recommender-name X` among the containers' arguments. */
export function recommenderNameOf(d: DeploymentObject): string | undefined {
  for (const c of d.spec?.template?.spec?.containers ?? []) {
    const argv = [...(c.command ?? []), ...(c.args ?? [])];
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i] as string;
      const m = /^--?recommender-name(?:=(.*))?$/.exec(a);
      if (m) return m[1] ?? argv[i + 1];
    }
  }
  return undefined;
}

export function componentsOf(deployments: readonly DeploymentObject[]): UpstreamComponent[] {
  const out: UpstreamComponent[] = [];
  for (const d of deployments) {
    const role = roleOf(d);
    if (!role || d.spec?.replicas === 0) continue;
    const where = `${d.metadata?.namespace ?? UPSTREAM_NAMESPACE}/${d.metadata?.name ?? ''}`;
    const name = role === 'recommender' ? recommenderNameOf(d) : undefined;
    out.push({ role, where, ...(name ? { recommenderName: name } : {}) });
  }
  return out;
}

const forbidden = (err: unknown) =>
  err instanceof ClusterAccessError && (err.status === 403 || err.status === 401);

export async function readUpstreamVpa(reader: RawReader): Promise<UpstreamVpa> {
  try {
    const deployments: DeploymentObject[] = [];
    await reader.list<DeploymentObject>(
      'list kube-system Deployments',
      `/apis/apps/v1/namespaces/${UPSTREAM_NAMESPACE}/deployments`,
      {},
      (items) => deployments.push(...items.map((d) => ({ metadata: d.metadata, spec: d.spec }))),
      { pageSize: 500, onRestart: () => deployments.splice(0) },
    );
    const components = componentsOf(deployments);
    const webhook = await readWebhook(reader);
    if (webhook && !components.some((c) => c.role === 'admission-controller')) components.push(webhook);
    return { state: 'read', components };
  } catch (err) {
    if (forbidden(err))
      return {
        state: 'unknown',
        components: [],
        detail: `forbidden: ${(err as ClusterAccessError).message}`,
      };
    throw err;
  }
}

/** The admission controller's webhook registration, wherever the controller runs. */
async function readWebhook(reader: RawReader): Promise<UpstreamComponent | undefined> {
  try {
    const w = await reader.get<WebhookConfig>(
      'get VPA webhook',
      `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${UPSTREAM_WEBHOOK}`,
    );
    const svc = w.webhooks?.[0]?.clientConfig?.service;
    const to = svc?.name ? ` -> service ${svc.namespace ?? ''}/${svc.name}` : '';
    return { role: 'admission-controller', where: `MutatingWebhookConfiguration ${UPSTREAM_WEBHOOK}${to}` };
  } catch (err) {
    if (err instanceof ClusterAccessError && err.status === 404) return undefined;
    throw err;
  }
}
