/**
 * Turns kubeconfig text into a client-node KubeConfig for exactly ONE context (one KubeConfig per
 * cluster, never merged: client-node keys cached credentials by user name, and fleet kubeconfigs
 * often all call their user "admin").
 *
 * What is refused, with a message naming the problem (and never echoing the kubeconfig's content):
 * unreadable YAML, an unknown or ambiguous context (available contexts listed), a context whose
 * cluster or user is missing, a missing or non-https server, `insecure-skip-tls-verify: true`
 * (TLS verification stays on), CA/cert/key data that is not base64 PEM, users without credentials,
 * auth-provider users and exec plugins other than the EKS ones. EKS exec users (`aws eks get-token`,
 * `aws-iam-authenticator token`) are replaced by a token minted in-process for every request, with the
 * credentials of the role they name (`--role-arn`, `-r`) when they name one.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import { type EksTokenProvider, regionProblem } from './eks-token.js';
import { KubeconfigError } from './errors.js';
import { registerSecret } from './redact.js';
import { type AssumeRoleSpec, assumeRoleProblem } from './role.js';

/** A kubeconfig larger than this is not a kubeconfig. */
const MAX_KUBECONFIG_BYTES = 1024 * 1024;

export interface EksExecAuth {
  /** The EKS cluster name the token is minted for (x-k8s-aws-id). */
  clusterName: string;
  region: string;
  /** Which plugin the kubeconfig named. */
  plugin: 'aws eks get-token' | 'aws-iam-authenticator';
  /** The role tokens are minted with: the registration's, else the plugin's `--role-arn` / `-r`. */
  role?: AssumeRoleSpec;
}

export type UserAuth = { kind: 'token' } | { kind: 'client-certificate' } | { kind: 'eks'; eks: EksExecAuth };

/** Credential-free facts about the selected context (safe to log). */
export interface KubeconfigInfo {
  context: string;
  clusterEntry: string;
  userEntry: string;
  server: string;
  namespace?: string;
  auth: UserAuth;
}

export interface BuildKubeConfigOptions {
  /** fleetscope's name for the cluster, used in error messages. */
  cluster: string;
  /** Context to use; default the kubeconfig's current-context, or its only context. */
  context?: string;
  /** Supplies EKS tokens when the user is an EKS exec plugin. Required for such kubeconfigs. */
  eksTokens?: EksTokenProvider;
  /** Region for EKS tokens when neither the exec args nor the server name give one. */
  defaultRegion?: string;
  /** The role to mint EKS tokens with, set at registration; overrides the plugin's own `--role-arn`. */
  assumeRole?: AssumeRoleSpec;
  /** Directory relative certificate/key/token file paths resolve against (the kubeconfig file's). */
  baseDir?: string;
  /** Process environment (tests). */
  env?: NodeJS.ProcessEnv;
}

export interface BuiltKubeConfig {
  kubeConfig: KubeConfig;
  info: KubeconfigInfo;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

interface NamedEntry {
  name: string;
  body: Obj;
}

function namedList(
  doc: Obj,
  key: 'clusters' | 'users' | 'contexts',
  inner: string,
  fail: (m: string) => never,
) {
  const raw = doc[key];
  if (raw === undefined || raw === null) return [] as NamedEntry[];
  if (!Array.isArray(raw)) fail(`"${key}" must be a list`);
  const out: NamedEntry[] = [];
  (raw as unknown[]).forEach((e, i) => {
    if (!isObj(e)) fail(`${key}[${i}] must be a mapping`);
    const name = str((e as Obj).name);
    if (!name) fail(`${key}[${i}] has no name`);
    const body = (e as Obj)[inner];
    if (!isObj(body)) fail(`${key}[${i}] ("${name}") has no "${inner}" mapping`);
    out.push({ name: name as string, body: body as Obj });
  });
  return out;
}

const PEM_B64 = /^LS0tLS1CRUdJTi/;

function isBase64Pem(v: string): boolean {
  const compact = v.replace(/\s+/g, '');
  if (!PEM_B64.test(compact) || !/^[A-Za-z0-9+/]+=*$/.test(compact)) return false;
  return Buffer.from(compact, 'base64').toString('latin1').includes('-----BEGIN ');
}

/**
 * Parses and validates the kubeconfig text; returns a KubeConfig holding only the selected context,
 * its cluster and its user. Throws {@link KubeconfigError}.
 */
export function buildKubeConfig(text: string, opts: BuildKubeConfigOptions): BuiltKubeConfig {
  const fail: (detail: string) => never = (detail) => {
    throw new KubeconfigError(opts.cluster, detail);
  };
  const env = opts.env ?? process.env;

  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0')
    fail(
      'NODE_TLS_REJECT_UNAUTHORIZED=0 turns TLS verification off for the whole process; fleetscope refuses to talk to clusters with it set',
    );
  if (typeof text !== 'string' || text.trim().length === 0) fail('the kubeconfig is empty');
  if (Buffer.byteLength(text, 'utf8') > MAX_KUBECONFIG_BYTES)
    fail(`the kubeconfig is larger than ${MAX_KUBECONFIG_BYTES} bytes`);

  // Parse. The yaml library's messages quote the offending line, which could be a credential, so
  // only the error code and position are reported.
  const parsed = parseDocument(text, { uniqueKeys: true, prettyErrors: true, strict: true });
  if (parsed.errors.length > 0) {
    const e = parsed.errors[0]!;
    const pos = e.linePos?.[0];
    fail(
      `the kubeconfig is not valid YAML (${e.code}${pos ? ` at line ${pos.line}, column ${pos.col}` : ''})`,
    );
  }
  let doc: unknown;
  try {
    doc = parsed.toJS({ maxAliasCount: 100 });
  } catch (e) {
    fail(`the kubeconfig could not be read as YAML (${(e as Error).name})`);
  }
  if (!isObj(doc)) fail('the kubeconfig must be a YAML mapping with clusters, contexts and users');
  const root = doc as Obj;
  if (root.kind !== undefined && root.kind !== 'Config')
    fail(`the kubeconfig has kind ${JSON.stringify(root.kind).slice(0, 40)}; expected "Config"`);

  const clusters = namedList(root, 'clusters', 'cluster', fail);
  const users = namedList(root, 'users', 'user', fail);
  const contexts = namedList(root, 'contexts', 'context', fail);
  const names = (l: NamedEntry[]) => (l.length ? l.map((e) => `"${e.name}"`).join(', ') : '(none)');

  // Select the context.
  if (contexts.length === 0) fail('the kubeconfig defines no contexts');
  const wanted = opts.context ?? str(root['current-context']);
  let ctx: NamedEntry | undefined;
  if (wanted) {
    ctx = contexts.find((c) => c.name === wanted);
    if (!ctx) fail(`context "${wanted}" is not in the kubeconfig; available contexts: ${names(contexts)}`);
  } else if (contexts.length === 1) {
    ctx = contexts[0];
  } else {
    fail(
      `the kubeconfig has several contexts and no current-context; name one in the cluster's kubeconfig reference. Available contexts: ${names(contexts)}`,
    );
  }
  const context = ctx as NamedEntry;
  const clusterRef = str(context.body.cluster);
  const userRef = str(context.body.user);
  if (!clusterRef) fail(`context "${context.name}" names no cluster`);
  if (!userRef) fail(`context "${context.name}" names no user`);
  const clusterEntry = clusters.find((c) => c.name === clusterRef);
  if (!clusterEntry)
    fail(
      `context "${context.name}" refers to cluster "${clusterRef}", which the kubeconfig does not define (clusters: ${names(clusters)})`,
    );
  const userEntry = users.find((u) => u.name === userRef);
  if (!userEntry)
    fail(
      `context "${context.name}" refers to user "${userRef}", which the kubeconfig does not define (users: ${names(users)})`,
    );
  const c = (clusterEntry as NamedEntry).body;
  const u = (userEntry as NamedEntry).body;
  const cName = clusterRef as string;
  const uName = userRef as string;
  /** A PEM given inline (`<field>-data`, base64) or as a file (`<field>`, resolved and checked). */
  const pem = (from: Record<string, unknown>, field: string, owner: string) => {
    const data = str(from[`${field}-data`]);
    if (data !== undefined && !isBase64Pem(data)) fail(`${field}-data of ${owner} is not base64-encoded PEM`);
    return { data, file: resolveFile(str(from[field]), opts.baseDir, `${field} of ${owner}`, fail) };
  };

  // Cluster.
  const serverRaw = str(c.server);
  if (!serverRaw) fail(`cluster "${cName}" has no server`);
  let server: URL;
  try {
    server = new URL(serverRaw as string);
  } catch {
    fail(`cluster "${cName}" has a server that is not a URL`);
  }
  if (server.username || server.password) fail(`cluster "${cName}" has credentials in its server URL`);
  if (server.protocol !== 'https:')
    fail(`cluster "${cName}" server must be an https:// URL (got ${server.protocol}//${server.host})`);
  const skip = c['insecure-skip-tls-verify'];
  if (skip === true || skip === 'true')
    fail(
      `cluster "${cName}" sets insecure-skip-tls-verify: true; fleetscope keeps TLS verification on. Remove it and provide certificate-authority-data for the cluster's CA`,
    );
  const { data: caData, file: caFile } = pem(c, 'certificate-authority', `cluster "${cName}"`);
  const tlsServerName = str(c['tls-server-name']);
  const proxyUrl = str(c['proxy-url']);
  const serverUrl = serverRaw!.replace(/\/+$/, '');

  // User.
  if (u['auth-provider'] !== undefined)
    fail(
      `user "${uName}" uses an auth-provider plugin, which fleetscope does not support; use a token, a client certificate or EKS`,
    );
  if (u.username !== undefined || u.password !== undefined)
    fail(`user "${uName}" uses basic auth (username/password), which Kubernetes removed in 1.19`);

  let auth: UserAuth | undefined;
  let token = str(u.token);
  const tokenFile = str(u['token-file']);
  if (!token && tokenFile) {
    const p = resolveFile(tokenFile, opts.baseDir, `token-file of user "${uName}"`, fail) as string;
    token = readFileSync(p, 'utf8').trim() || undefined;
    if (!token) fail(`token-file of user "${uName}" is empty`);
  }
  registerSecret(token);
  registerSecret(str(u['client-key-data']));
  const { data: keyData, file: keyFile } = pem(u, 'client-key', `user "${uName}"`);
  const { data: certData, file: certFile } = pem(u, 'client-certificate', `user "${uName}"`);
  const hasCert = certData !== undefined || certFile !== undefined;
  const hasKey = keyData !== undefined || keyFile !== undefined;
  if (hasCert !== hasKey)
    fail(
      `user "${uName}" has a client ${hasCert ? 'certificate without a key' : 'key without a certificate'}`,
    );

  if (u.exec !== undefined) {
    if (token || hasCert) fail(`user "${uName}" has both an exec plugin and static credentials; keep one`);
    const eks = detectEksExec(u.exec, uName, server.hostname, opts, env, fail);
    auth = { kind: 'eks', eks };
  } else if (token) {
    auth = { kind: 'token' };
  } else if (hasCert) {
    auth = { kind: 'client-certificate' };
  } else {
    fail(`user "${uName}" has no credentials (token, client certificate, or an EKS exec plugin)`);
  }
  const userAuth = auth as UserAuth;
  if (opts.assumeRole && userAuth.kind !== 'eks')
    fail(
      `a role to assume is set for this cluster, but user "${uName}" authenticates with a ${userAuth.kind}; roles apply to EKS users ("aws eks get-token" / "aws-iam-authenticator token")`,
    );
  if (userAuth.kind === 'eks' && !opts.eksTokens)
    fail(`user "${uName}" needs EKS tokens but no EKS token provider was configured`);

  const impersonate = str(u.as);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: cName,
        server: serverUrl,
        caData,
        caFile,
        skipTLSVerify: false,
        tlsServerName,
        proxyUrl,
      },
    ],
    users: [
      {
        name: uName,
        token: userAuth.kind === 'token' ? token : undefined,
        certData,
        keyData,
        certFile,
        keyFile,
        impersonateUser: impersonate,
      },
    ],
    contexts: [{ name: context.name, cluster: cName, user: uName, namespace: str(context.body.namespace) }],
    currentContext: context.name,
  });

  if (userAuth.kind === 'eks') {
    const provider = opts.eksTokens as EksTokenProvider;
    const { clusterName, region, role } = userAuth.eks;
    const authenticator: Parameters<KubeConfig['addAuthenticator']>[0] = {
      isAuthProvider: (user) => user?.name === uName,
      applyAuthentication: async (_user, requestOpts) => {
        const t = await provider.token(clusterName, region, role);
        const o = requestOpts as { headers?: Record<string, string> };
        o.headers ??= {};
        o.headers.Authorization = `Bearer ${t}`;
      },
    };
    kc.addAuthenticator(authenticator);
  }

  return {
    kubeConfig: kc,
    info: {
      context: context.name,
      clusterEntry: cName,
      userEntry: uName,
      server: `${server.protocol}//${server.host}${server.pathname === '/' ? '' : server.pathname}`,
      namespace: str(context.body.namespace),
      auth: userAuth,
    },
  };
}

function resolveFile(
  p: string | undefined,
  baseDir: string | undefined,
  what: string,
  fail: (m: string) => never,
): string | undefined {
  if (p === undefined) return undefined;
  const abs = path.isAbsolute(p) || !baseDir ? p : path.join(baseDir, p);
  if (!existsSync(abs)) fail(`${what} names a file that does not exist here ("${abs}")`);
  return abs;
}

// ---------------------------------------------------------------------------------------------------
// EKS exec plugins.

function flagValue(args: string[], names: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    for (const n of names) {
      if (a === n) return args[i + 1];
      if (a.startsWith(`${n}=`)) return a.slice(n.length + 1);
    }
  }
  return undefined;
}

const EKS_HOST_REGION = /\.([a-z]{2}(?:-[a-z]+)+-\d+)\.eks\.amazonaws\.com(?:\.cn)?$/;

function detectEksExec(
  exec: unknown,
  uName: string,
  serverHost: string,
  opts: BuildKubeConfigOptions,
  env: NodeJS.ProcessEnv,
  fail: (m: string) => never,
): EksExecAuth {
  if (!isObj(exec)) fail(`user "${uName}" has an exec entry that is not a mapping`);
  const e = exec as Obj;
  const command = str(e.command);
  if (!command) fail(`user "${uName}" has an exec plugin with no command`);
  const args = Array.isArray(e.args) ? e.args.filter((a): a is string => typeof a === 'string') : [];
  const base = path.basename(command as string).replace(/\.exe$/i, '');
  const execEnv: Record<string, string> = {};
  if (Array.isArray(e.env))
    for (const kv of e.env)
      if (isObj(kv) && typeof kv.name === 'string' && typeof kv.value === 'string')
        execEnv[kv.name] = kv.value;

  let plugin: EksExecAuth['plugin'];
  let clusterName: string | undefined;
  let region: string | undefined;
  let roleArn: string | undefined;
  let externalId: string | undefined;
  if (base === 'aws' && args.includes('eks') && args.includes('get-token')) {
    plugin = 'aws eks get-token';
    clusterName = flagValue(args, ['--cluster-name', '--cluster-id']);
    region = flagValue(args, ['--region']);
    roleArn = flagValue(args, ['--role-arn']);
  } else if (base === 'aws-iam-authenticator' && args.includes('token')) {
    plugin = 'aws-iam-authenticator';
    clusterName = flagValue(args, ['-i', '--cluster-id']);
    region = flagValue(args, ['--region']);
    roleArn = flagValue(args, ['-r', '--role']);
    externalId = flagValue(args, ['--external-id']);
  } else {
    fail(
      `user "${uName}" runs the exec plugin "${base}", which cannot work in Lambda (there are no binaries to run). Use a token or client certificate, or an EKS kubeconfig ("aws eks get-token" / "aws-iam-authenticator token"), whose token fleetscope mints itself`,
    );
  }
  if (!clusterName) fail(`user "${uName}" runs ${plugin!} without a cluster name (--cluster-name / -i)`);
  region ??=
    EKS_HOST_REGION.exec(serverHost)?.[1] ??
    execEnv.AWS_REGION ??
    execEnv.AWS_DEFAULT_REGION ??
    opts.defaultRegion ??
    env.AWS_REGION ??
    env.AWS_DEFAULT_REGION;
  if (!region)
    fail(
      `user "${uName}" runs ${plugin!} without --region and no region could be inferred (server name, AWS_REGION)`,
    );
  const badRegion = regionProblem(region);
  if (badRegion) fail(`user "${uName}" runs ${plugin!} for a region that cannot be used: ${badRegion}`);
  const role =
    opts.assumeRole ??
    (roleArn !== undefined ? { roleArn, ...(externalId ? { externalId } : {}) } : undefined);
  if (role) {
    registerSecret(role.externalId);
    const problem = assumeRoleProblem(role);
    if (problem) fail(`user "${uName}" runs ${plugin!} with an unusable role: ${problem}`);
  }
  return {
    plugin: plugin!,
    clusterName: clusterName as string,
    region: region as string,
    ...(role ? { role } : {}),
  };
}
