/**
 * A real etcd and kube-apiserver on free loopback ports, as envtest starts them for Go projects: generated
 * certificates (TLS verified by every client), RBAC on, a service-account key pair and the front-proxy
 * certificates of the aggregation layer. Only the API server runs: no controllers, scheduler or kubelet.
 */
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCertificates } from '../sim/certs.js';
import { kubeconfigYaml } from '../sim/kubeconfig.js';
import { apiserverFor, type KubeAssets } from './assets.js';
import { launch, terminate } from './processes.js';

export interface RealApiserver {
  /** The server's own version (`v1.36.2`), read from /version. */
  version: string;
  url: string;
  caPem: string;
  /** A kubeconfig for a `system:masters` user (the cluster's admin). */
  adminKubeconfig: string;
  /** A kubeconfig for any user and groups, authenticated by a client certificate and judged by RBAC. */
  kubeconfigFor(user: string, groups?: string[]): Promise<string>;
  /** The client certificate behind kubeconfigFor (raw HTTPS clients; no certificate means the admin). */
  credentials(user?: string, groups?: string[]): Promise<ClientCredentials>;
  /** Where etcd's data, the logs (`<component>.log`) and the PKI files are. */
  dir: string;
  /** The PKI files other components of a cluster start with (the CA, the service-account key). */
  pki: { ca: string; saKey: string };
  /** The process ids (each its own group's) of etcd and kube-apiserver (updated by rebuild). */
  pids: number[];
  /**
   * The cluster rebuilt behind the same endpoint: etcd and kube-apiserver stopped, etcd's data wiped
   * (every object gone, kube-system made again with a new UID), both started again on the same URL with
   * the same certificates, so every kubeconfig issued before still reaches it and is still trusted. A
   * real server refuses to delete kube-system (NamespaceLifecycle): this is how a test gives a real
   * cluster a new identity behind an unchanged endpoint and credentials (issue 34, defect 5).
   */
  rebuild(): Promise<void>;
  stop(): Promise<void>;
}

export interface ClientCredentials {
  certPem: string;
  keyPem: string;
}

export interface StartOptions {
  /** `1.36` or `1.36.2`; the newest in the assets when unset. */
  version?: string;
  /** Extra kube-apiserver flags (`--feature-gates=...`). */
  flags?: string[];
  /** Where etcd's data and the certificates live; a new temporary directory when unset. */
  dir?: string;
  /** Seconds to wait for /readyz (default 90: a loaded 2-core machine is slow to start it). */
  readyWithinSeconds?: number;
}

const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export async function startRealApiserver(
  assets: KubeAssets,
  opts: StartOptions = {},
): Promise<RealApiserver> {
  const binary = opts.version ? apiserverFor(assets, opts.version) : [...assets.apiservers.values()][0];
  if (!binary)
    throw new Error(`no kube-apiserver ${opts.version} among ${[...assets.apiservers.keys()].join(', ')}`);
  const dir = opts.dir ?? mkdtempSync(join(shmOrTmp(), 'fleetscope-envtest-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await terminate(child);
    if (!opts.dir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const files = await writeCertificates(dir);
    const admin = await files.issue('fleetscope-envtest-admin', ['system:masters']);
    const pids: number[] = [];
    let port = 0;
    /** etcd (on its data dir), then kube-apiserver on its port (kept by a rebuild); its version once ready. */
    const launchBoth = async () => {
      const etcdUrl = await startEtcd(assets.etcd, dir, children);
      port ||= await freePort();
      children.push(
        launch(binary, apiserverFlags(port, etcdUrl, files, opts.flags ?? []), join(dir, 'apiserver.log')),
      );
      pids.splice(0, pids.length, ...children.flatMap((c) => (c.pid === undefined ? [] : [c.pid])));
      return waitReady(`https://127.0.0.1:${port}`, files.caPem, admin, children.at(-1), opts, dir);
    };
    const version = await launchBoth();
    const url = `https://127.0.0.1:${port}`;
    const kubeconfigFor = async (user: string, groups: string[] = []) =>
      kubeconfigYaml([
        { name: 'envtest', server: url, caPem: files.caPem, client: await files.issue(user, groups) },
      ]);
    const server: RealApiserver = {
      version,
      url,
      caPem: files.caPem,
      adminKubeconfig: kubeconfigYaml([{ name: 'envtest', server: url, caPem: files.caPem, client: admin }]),
      kubeconfigFor,
      credentials: async (user, groups = []) => (user ? files.issue(user, groups) : admin),
      dir,
      pki: { ca: files.paths.ca, saKey: files.paths.saKey },
      pids,
      async rebuild() {
        for (const child of children.splice(0).reverse()) await terminate(child);
        rmSync(join(dir, 'etcd'), { recursive: true, force: true });
        server.version = await launchBoth();
      },
      stop,
    };
    return server;
  } catch (e) {
    await stop();
    throw e;
  }
}

interface CertFiles {
  caPem: string;
  paths: Record<'ca' | 'cert' | 'key' | 'saPub' | 'saKey' | 'proxyCa' | 'proxyCert' | 'proxyKey', string>;
  issue(user: string, groups: string[]): Promise<{ certPem: string; keyPem: string }>;
}

async function writeCertificates(dir: string): Promise<CertFiles> {
  const pki = join(dir, 'pki');
  mkdirSync(pki, { recursive: true });
  const serving = await createCertificates();
  const frontProxy = await createCertificates();
  const proxyClient = await frontProxy.issueClient('front-proxy-client', []);
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const write = (name: string, text: string) => {
    const path = join(pki, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  return {
    caPem: serving.caPem,
    paths: {
      ca: write('ca.crt', serving.caPem),
      cert: write('apiserver.crt', serving.certPem),
      key: write('apiserver.key', serving.keyPem),
      saPub: write('sa.pub', sa.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
      saKey: write('sa.key', sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
      proxyCa: write('front-proxy-ca.crt', frontProxy.caPem),
      proxyCert: write('front-proxy-client.crt', proxyClient.certPem),
      proxyKey: write('front-proxy-client.key', proxyClient.keyPem),
    },
    issue: (user, groups) => serving.issueClient(user, groups),
  };
}

function apiserverFlags(port: number, etcdUrl: string, f: CertFiles, extra: string[]): string[] {
  const p = f.paths;
  return [
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--etcd-servers=${etcdUrl}`,
    `--tls-cert-file=${p.cert}`,
    `--tls-private-key-file=${p.key}`,
    `--client-ca-file=${p.ca}`,
    '--authorization-mode=Node,RBAC',
    '--allow-privileged=true',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--endpoint-reconciler-type=none',
    `--service-account-issuer=${SA_ISSUER}`,
    `--api-audiences=${SA_ISSUER}`,
    `--service-account-key-file=${p.saPub}`,
    `--service-account-signing-key-file=${p.saKey}`,
    `--requestheader-client-ca-file=${p.proxyCa}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${p.proxyCert}`,
    `--proxy-client-key-file=${p.proxyKey}`,
    ...extra,
  ];
}

/**
 * etcd on two free ports. A port found free can be taken by a suite starting beside this one (or be
 * found twice) before etcd binds it: etcd then exits at once, and is started again on other ports.
 */
async function startEtcd(etcd: string, dir: string, children: ChildProcess[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdOnce(etcd, dir, children);
    } catch (e) {
      if (!(e instanceof EtcdExited) || attempt >= 3) throw e;
      // Nothing of a start that never served is worth keeping: its data directory goes with it.
      rmSync(join(dir, 'etcd'), { recursive: true, force: true });
    }
  }
}

class EtcdExited extends Error {}

async function startEtcdOnce(etcd: string, dir: string, children: ChildProcess[]): Promise<string> {
  const client = await freePort();
  let peer = await freePort();
  while (peer === client) peer = await freePort();
  const clientUrl = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const child = launch(
    etcd,
    [
      '--name=envtest',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=envtest=${peerUrl}`,
      // Tests write and throw away: no need for etcd's default 10k-entry snapshots or metrics.
      '--snapshot-count=100000',
      '--log-level=error',
    ],
    join(dir, 'etcd.log'),
  );
  children.push(child);
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) {
      children.splice(children.indexOf(child), 1);
      throw new EtcdExited(`etcd exited with ${child.exitCode} (see ${dir}/etcd.log)`);
    }
    if (await httpOk(`${clientUrl}/health`)) return clientUrl;
    await sleep(100);
  }
  throw new Error(`etcd did not become healthy in 30 s (see ${dir}/etcd.log)`);
}

async function waitReady(
  url: string,
  caPem: string,
  admin: { certPem: string; keyPem: string },
  child: ChildProcess | undefined,
  opts: StartOptions,
  dir: string,
): Promise<string> {
  const deadline = (opts.readyWithinSeconds ?? 90) * 10;
  const tls = { ca: caPem, cert: admin.certPem, key: admin.keyPem };
  for (let i = 0; i < deadline; i++) {
    if (child?.exitCode !== null)
      throw new Error(`kube-apiserver exited with ${child?.exitCode} (see ${dir}/apiserver.log)`);
    if ((await getText(`${url}/readyz`, tls))?.status === 200) {
      const version = await getText(`${url}/version`, tls);
      return (JSON.parse(version?.body ?? '{}') as { gitVersion?: string }).gitVersion ?? 'unknown';
    }
    await sleep(100);
  }
  throw new Error(
    `kube-apiserver was not ready in ${opts.readyWithinSeconds ?? 90} s (see ${dir}/apiserver.log)`,
  );
}

type Tls = { ca: string; cert: string; key: string };

function getText(url: string, tls: Tls): Promise<{ status: number; body: string } | undefined> {
  return new Promise((done) => {
    const req = request(url, { ...tls, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => done(undefined));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function httpOk(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** etcd is faster on tmpfs; /dev/shm is one where it exists. */
function shmOrTmp(): string {
  try {
    const probe = mkdtempSync('/dev/shm/fleetscope-probe-');
    rmSync(probe, { recursive: true });
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}
