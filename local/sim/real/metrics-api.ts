/**
 * metrics.k8s.io for a real apiserver: the simulator's metrics-server (metrics.ts, usage from the load
 * profiles at the simulated time) served over HTTPS on a loopback port and registered with the
 * aggregator as a real metrics-server is, by an APIService pointing at a Service.
 *
 * How the aggregator reaches a loopback port: it resolves an APIService's service reference to a URL.
 * A ClusterIP Service resolves to its cluster IP (nothing routes it without kube-proxy), and Endpoints
 * may not hold a loopback address (422: "may not be in the loopback range"), but an ExternalName
 * Service resolves to `https://<externalName>:<APIService port>`: so the Service is ExternalName
 * `127.0.0.1` (the server accepts an address there) and the APIService's port is ours. The aggregator verifies our certificate
 * (caBundle, name `<service>.<namespace>.svc`), and we accept only clients signed by the front-proxy CA
 * the server publishes in kube-system/extension-apiserver-authentication, i.e. the aggregator itself.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCertificates } from '../certs.js';
import type { ClusterState } from '../cluster.js';
import { ApiError } from '../errors.js';
import type { Json } from '../json.js';
import { type RealApi, statusOf } from './api.js';

export const METRICS_SERVICE = 'fleetscope-sim-metrics';
const NAMESPACE = 'kube-system';
const APISERVICE = 'v1beta1.metrics.k8s.io';
const BASE = '/apis/metrics.k8s.io/v1beta1';

const RESOURCE_LIST = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'metrics.k8s.io/v1beta1',
  resources: [
    { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
    { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
  ],
};

export interface MetricsApi {
  port: number;
  stop(): Promise<void>;
}

/** Starts the server, registers it and waits until the aggregator reports it Available. */
export async function serveMetricsApi(cluster: ClusterState, api: RealApi): Promise<MetricsApi> {
  const auth = await api.get<Json>(
    `/api/v1/namespaces/${NAMESPACE}/configmaps/extension-apiserver-authentication`,
  );
  const frontProxyCa = auth?.data?.['requestheader-client-ca-file'];
  if (!frontProxyCa)
    throw new Error(
      'the apiserver has no front-proxy CA (requestheader-client-ca-file): start it with --requestheader-client-ca-file and --proxy-client-cert-file so it can aggregate metrics.k8s.io',
    );
  const certs = await createCertificates([`${METRICS_SERVICE}.${NAMESPACE}.svc`]);
  const server = createServer(
    { cert: certs.certPem, key: certs.keyPem, ca: frontProxyCa, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const { status, body } = answer(cluster, new URL(req.url ?? '/', 'https://localhost'));
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    await register(api, port, certs.caPem);
    await waitAvailable(api);
  } catch (err) {
    await close(server);
    throw err;
  }
  return { port, stop: () => close(server) };
}

function answer(cluster: ClusterState, url: URL): { status: number; body: unknown } {
  const q = {
    labelSelector: url.searchParams.get('labelSelector') ?? undefined,
    fieldSelector: url.searchParams.get('fieldSelector') ?? undefined,
  };
  const m = cluster.metrics;
  const path = url.pathname.replace(/\/$/, '');
  try {
    if (path === BASE) return { status: 200, body: RESOURCE_LIST };
    if (!path.startsWith(`${BASE}/`)) return notFound();
    const parts = path
      .slice(BASE.length + 1)
      .split('/')
      .map(decodeURIComponent);
    if (parts[0] === 'nodes' && parts.length <= 2)
      return { status: 200, body: parts[1] ? m.getNode(parts[1]) : m.listNodes(q) };
    if (parts[0] === 'pods' && parts.length === 1) return { status: 200, body: m.listPods(undefined, q) };
    if (parts[0] === 'namespaces' && parts[2] === 'pods' && parts.length <= 4) {
      const ns = parts[1] as string;
      return { status: 200, body: parts[3] ? m.getPod(ns, parts[3]) : m.listPods(ns, q) };
    }
    return notFound();
  } catch (err) {
    if (err instanceof ApiError) return { status: err.code, body: err.toStatus() };
    throw err;
  }
}

const notFound = () => ({
  status: 404,
  body: {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason: 'NotFound',
    code: 404,
    message: 'the server could not find the requested resource',
  },
});

async function register(api: RealApi, port: number, caPem: string): Promise<void> {
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: METRICS_SERVICE,
      namespace: NAMESPACE,
      labels: { 'app.kubernetes.io/managed-by': 'fleetscope-sim' },
    },
    spec: { type: 'ExternalName', externalName: '127.0.0.1', ports: [{ name: 'https', port }] },
  };
  await upsert(api, `/api/v1/namespaces/${NAMESPACE}/services`, METRICS_SERVICE, service);
  const apiService = {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: APISERVICE, labels: { 'app.kubernetes.io/managed-by': 'fleetscope-sim' } },
    spec: {
      service: { namespace: NAMESPACE, name: METRICS_SERVICE, port },
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      caBundle: Buffer.from(caPem).toString('base64'),
      groupPriorityMinimum: 100,
      versionPriority: 100,
    },
  };
  await upsert(api, '/apis/apiregistration.k8s.io/v1/apiservices', APISERVICE, apiService);
}

/** Creates the object, or replaces it (a previous run's port and CA are stale). */
async function upsert(api: RealApi, collection: string, name: string, obj: Json): Promise<void> {
  try {
    await api.send('POST', collection, obj);
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    const current = await api.get<Json>(`${collection}/${name}`);
    const metadata = { ...obj.metadata, resourceVersion: current.metadata.resourceVersion };
    await api.send('PUT', `${collection}/${name}`, { ...obj, metadata });
  }
}

async function waitAvailable(api: RealApi): Promise<void> {
  let last = '';
  for (let i = 0; i < 600; i++) {
    const svc = await api.get<Json>(`/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE}`);
    const cond = (svc.status?.conditions ?? []).find((c: Json) => c.type === 'Available');
    if (cond?.status === 'True') return;
    last = cond ? `${cond.reason}: ${cond.message}` : 'no Available condition yet';
    await sleep(100);
  }
  throw new Error(`APIService ${APISERVICE} did not become Available in 60 s (${last})`);
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
