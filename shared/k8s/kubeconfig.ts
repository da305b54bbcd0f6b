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
import { KubeconfigError } from './errors.js';
import { registerSecret } from './redact.js';
import { type AssumeRoleSpec, assumeRoleProblem } from './role.js';
import { type EksTokenProvider, regionShapeProblem } from './token-source.js';

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

type Fail = (detail: string) => never;

/**
 * Parses and validates the kubeconfig text; returns a KubeConfig holding only the selected context,
 * its cluster and its user. Throws {@link KubeconfigError}.
 */
export function buildKubeConfig(text: string, opts: BuildKubeConfigOptions): BuiltKubeConfig {
  const fail: Fail = (detail) => {
    throw new KubeconfigError(opts.cluster, detail);
  };
  const env = opts.env ?? process.env;
  refuseUnsafeInput(text, env, fail);
  const root = parseKubeconfig(text, fail);
  const selected = selectContext(root, opts.context, fail);
  const cluster = readCluster(selected.cluster, opts.baseDir, fail);
  const user = readUser(selected.user, cluster.url.hostname, opts, env, fail);
  const kubeConfig = assembleKubeConfig(selected, cluster, user);
  if (user.auth.kind === 'eks') addEksAuthenticator(kubeConfig, selected.user.name, user.auth.eks, opts);
  const { url } = cluster;
  return {
    kubeConfig,
    info: {
      context: selected.context.name,
      clusterEntry: selected.cluster.name,
      userEntry: selected.user.name,
      server: `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`,
      namespace: str(selected.context.body.namespace),
      auth: user.auth,
    },
  };
}

/** Refusals that need no parsing: a process with TLS off, and text that cannot be a kubeconfig. */
function refuseUnsafeInput(text: string, env: NodeJS.ProcessEnv, fail: Fail): void {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0')
    fail(
      'NODE_TLS_REJECT_UNAUTHORIZED=0 turns TLS verification off for the whole process; fleetscope refuses to talk to clusters with it set',
    );
  if (typeof text !== 'string' || text.trim().length === 0) fail('the kubeconfig is empty');
  if (Buffer.byteLength(text, 'utf8') > MAX_KUBECONFIG_BYTES)
    fail(`the kubeconfig is larger than ${MAX_KUBECONFIG_BYTES} bytes`);
}

/**
 * The YAML document as a mapping of kind Config. The yaml library's messages quote the offending
 * line, which could be a credential, so only the error code and position are reported.
 */
function parseKubeconfig(text: string, fail: Fail): Obj {
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
  return root;
}

/** The context in use and the cluster and user entries it names. */
interface SelectedContext {
  context: NamedEntry;
  cluster: NamedEntry;
  user: NamedEntry;
}

const entryNames = (l: NamedEntry[]) => (l.length ? l.map((e) => `"${e.name}"`).join(', ') : '(none)');

/** The wanted context (else current-context, else the only one), with its cluster and user resolved. */
function selectContext(root: Obj, wantedContext: string | undefined, fail: Fail): SelectedContext {
  const clusters = namedList(root, 'clusters', 'cluster', fail);
  const users = namedList(root, 'users', 'user', fail);
  const contexts = namedList(root, 'contexts', 'context', fail);

  if (contexts.length === 0) fail('the kubeconfig defines no contexts');
  const wanted = wantedContext ?? str(root['current-context']);
  let context: NamedEntry | undefined;
  if (wanted) {
    context = contexts.find((c) => c.name === wanted);
    if (!context)
      fail(`context "${wanted}" is not in the kubeconfig; available contexts: ${entryNames(contexts)}`);
  } else if (contexts.length === 1) {
    context = contexts[0];
  } else {
    fail(
      `the kubeconfig has several contexts and no current-context; name one in the cluster's kubeconfig reference. Available contexts: ${entryNames(contexts)}`,
    );
  }
  const ctx = context as NamedEntry;
  const clusterRef = str(ctx.body.cluster);
  const userRef = str(ctx.body.user);
  if (!clusterRef) fail(`context "${ctx.name}" names no cluster`);
  if (!userRef) fail(`context "${ctx.name}" names no user`);
  const cluster = clusters.find((c) => c.name === clusterRef);
  if (!cluster)
    fail(
      `context "${ctx.name}" refers to cluster "${clusterRef}", which the kubeconfig does not define (clusters: ${entryNames(clusters)})`,
    );
  const user = users.find((u) => u.name === userRef);
  if (!user)
    fail(
      `context "${ctx.name}" refers to user "${userRef}", which the kubeconfig does not define (users: ${entryNames(users)})`,
    );
  return { context: ctx, cluster: cluster as NamedEntry, user: user as NamedEntry };
}

/** A PEM given inline (`<field>-data`, base64) or as a file (`<field>`, resolved and checked). */
interface PemSource {
  data?: string;
  file?: string;
}

function readPem(
  from: Obj,
  field: string,
  owner: string,
  baseDir: string | undefined,
  fail: Fail,
): PemSource {
  const data = str(from[`${field}-data`]);
  if (data !== undefined && !isBase64Pem(data)) fail(`${field}-data of ${owner} is not base64-encoded PEM`);
  return { data, file: resolveFile(str(from[field]), baseDir, `${field} of ${owner}`, fail) };
}

/** What the cluster entry says about reaching the API server, once checked. */
interface ClusterSettings {
  url: URL;
  /** The server as given, without trailing slashes. */
  server: string;
  ca: PemSource;
  tlsServerName?: string;
  proxyUrl?: string;
}

/** An https server without credentials in its URL, verified TLS, and a PEM CA when one is given. */
function readCluster(entry: NamedEntry, baseDir: string | undefined, fail: Fail): ClusterSettings {
  const { name, body: c } = entry;
  const serverRaw = str(c.server);
  if (!serverRaw) fail(`cluster "${name}" has no server`);
  let url: URL;
  try {
    url = new URL(serverRaw as string);
  } catch {
    fail(`cluster "${name}" has a server that is not a URL`);
  }
  if (url.username || url.password) fail(`cluster "${name}" has credentials in its server URL`);
  if (url.protocol !== 'https:')
    fail(`cluster "${name}" server must be an https:// URL (got ${url.protocol}//${url.host})`);
  const skip = c['insecure-skip-tls-verify'];
  if (skip === true || skip === 'true')
    fail(
      `cluster "${name}" sets insecure-skip-tls-verify: true; fleetscope keeps TLS verification on. Remove it and provide certificate-authority-data for the cluster's CA`,
    );
  return {
    url,
    server: serverRaw!.replace(/\/+$/, ''),
    ca: readPem(c, 'certificate-authority', `cluster "${name}"`, baseDir, fail),
    tlsServerName: str(c['tls-server-name']),
    proxyUrl: str(c['proxy-url']),
  };
}

/** The user's credentials, once checked, and which kind of authentication they amount to. */
interface UserSettings {
  auth: UserAuth;
  token?: string;
  cert: PemSource;
  key: PemSource;
  impersonate?: string;
}

/** Exactly one kind of credential: a token, a client certificate with its key, or an EKS exec plugin. */
function readUser(
  entry: NamedEntry,
  serverHost: string,
  opts: BuildKubeConfigOptions,
  env: NodeJS.ProcessEnv,
  fail: Fail,
): UserSettings {
  const { name, body: u } = entry;
  if (u['auth-provider'] !== undefined)
    fail(
      `user "${name}" uses an auth-provider plugin, which fleetscope does not support; use a token, a client certificate or EKS`,
    );
  if (u.username !== undefined || u.password !== undefined)
    fail(`user "${name}" uses basic auth (username/password), which Kubernetes removed in 1.19`);

  const token = readToken(entry, opts.baseDir, fail);
  registerSecret(token);
  registerSecret(str(u['client-key-data']));
  const key = readPem(u, 'client-key', `user "${name}"`, opts.baseDir, fail);
  const cert = readPem(u, 'client-certificate', `user "${name}"`, opts.baseDir, fail);
  const hasCert = cert.data !== undefined || cert.file !== undefined;
  const hasKey = key.data !== undefined || key.file !== undefined;
  if (hasCert !== hasKey)
    fail(
      `user "${name}" has a client ${hasCert ? 'certificate without a key' : 'key without a certificate'}`,
    );

  let auth: UserAuth | undefined;
  if (u.exec !== undefined) {
    if (token || hasCert) fail(`user "${name}" has both an exec plugin and static credentials; keep one`);
    auth = { kind: 'eks', eks: detectEksExec(u.exec, name, serverHost, opts, env, fail) };
  } else if (token) {
    auth = { kind: 'token' };
  } else if (hasCert) {
    auth = { kind: 'client-certificate' };
  } else {
    fail(`user "${name}" has no credentials (token, client certificate, or an EKS exec plugin)`);
  }
  const userAuth = auth as UserAuth;
  if (opts.assumeRole && userAuth.kind !== 'eks')
    fail(
      `a role to assume is set for this cluster, but user "${name}" authenticates with a ${userAuth.kind}; roles apply to EKS users ("aws eks get-token" / "aws-iam-authenticator token")`,
    );
  if (userAuth.kind === 'eks' && !opts.eksTokens)
    fail(`user "${name}" needs EKS tokens but no EKS token provider was configured`);
  return { auth: userAuth, token, cert, key, impersonate: str(u.as) };
}

/** The user's `token`, else the content of its `token-file` (which must not be empty). */
function readToken(entry: NamedEntry, baseDir: string | undefined, fail: Fail): string | undefined {
  const token = str(entry.body.token);
  const tokenFile = str(entry.body['token-file']);
  if (token || !tokenFile) return token;
  const p = resolveFile(tokenFile, baseDir, `token-file of user "${entry.name}"`, fail) as string;
  const fromFile = readFileSync(p, 'utf8').trim() || undefined;
  if (!fromFile) fail(`token-file of user "${entry.name}" is empty`);
  return fromFile;
}

/** A KubeConfig holding only the selected context, its cluster and its user; TLS verification always on. */
function assembleKubeConfig(selected: SelectedContext, cluster: ClusterSettings, user: UserSettings) {
  const cName = selected.cluster.name;
  const uName = selected.user.name;
  const { context } = selected;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: cName,
        server: cluster.server,
        caData: cluster.ca.data,
        caFile: cluster.ca.file,
        skipTLSVerify: false,
        tlsServerName: cluster.tlsServerName,
        proxyUrl: cluster.proxyUrl,
      },
    ],
    users: [
      {
        name: uName,
        token: user.auth.kind === 'token' ? user.token : undefined,
        certData: user.cert.data,
        keyData: user.key.data,
        certFile: user.cert.file,
        keyFile: user.key.file,
        impersonateUser: user.impersonate,
      },
    ],
    contexts: [{ name: context.name, cluster: cName, user: uName, namespace: str(context.body.namespace) }],
    currentContext: context.name,
  });
  return kc;
}

/** EKS users get a token minted in-process for every request, in place of the exec plugin. */
function addEksAuthenticator(
  kc: KubeConfig,
  userName: string,
  eks: EksExecAuth,
  opts: BuildKubeConfigOptions,
): void {
  const provider = opts.eksTokens as EksTokenProvider;
  const { clusterName, region, role } = eks;
  kc.addAuthenticator({
    isAuthProvider: (user) => user?.name === userName,
    applyAuthentication: async (_user, requestOpts) => {
      const t = await provider.token(clusterName, region, role);
      const o = requestOpts as { headers?: Record<string, string> };
      o.headers ??= {};
      o.headers.Authorization = `Bearer ${t}`;
    },
  });
}

function resolveFile(
  p: string | undefined,
  baseDir: string | undefined,
  what: string,
  fail: Fail,
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

/** The exec entry's command (base name, no .exe), string args and literal env. */
interface ExecEntry {
  base: string;
  args: string[];
  env: Record<string, string>;
}

/** What the EKS plugin's own flags say; the region and role may still come from elsewhere. */
interface EksPluginFlags {
  plugin: EksExecAuth['plugin'];
  clusterName?: string;
  region?: string;
  roleArn?: string;
  externalId?: string;
}

/** An EKS exec plugin's cluster, region and role, checked; any other plugin is refused. */
function detectEksExec(
  exec: unknown,
  uName: string,
  serverHost: string,
  opts: BuildKubeConfigOptions,
  env: NodeJS.ProcessEnv,
  fail: Fail,
): EksExecAuth {
  const entry = readExecEntry(exec, uName, fail);
  const flags = readEksPluginFlags(entry, uName, fail);
  const { plugin, clusterName } = flags;
  if (!clusterName) fail(`user "${uName}" runs ${plugin} without a cluster name (--cluster-name / -i)`);
  const region =
    flags.region ??
    EKS_HOST_REGION.exec(serverHost)?.[1] ??
    entry.env.AWS_REGION ??
    entry.env.AWS_DEFAULT_REGION ??
    opts.defaultRegion ??
    env.AWS_REGION ??
    env.AWS_DEFAULT_REGION;
  if (!region)
    fail(
      `user "${uName}" runs ${plugin} without --region and no region could be inferred (server name, AWS_REGION)`,
    );
  const badRegion = regionShapeProblem(region) ?? opts.eksTokens?.regionProblem?.(region) ?? null;
  if (badRegion) fail(`user "${uName}" runs ${plugin} for a region that cannot be used: ${badRegion}`);
  const role = eksRole(flags, opts.assumeRole, uName, fail);
  return { plugin, clusterName: clusterName as string, region: region as string, ...(role ? { role } : {}) };
}

function readExecEntry(exec: unknown, uName: string, fail: Fail): ExecEntry {
  if (!isObj(exec)) fail(`user "${uName}" has an exec entry that is not a mapping`);
  const e = exec as Obj;
  const command = str(e.command);
  if (!command) fail(`user "${uName}" has an exec plugin with no command`);
  const args = Array.isArray(e.args) ? e.args.filter((a): a is string => typeof a === 'string') : [];
  const env: Record<string, string> = {};
  if (Array.isArray(e.env))
    for (const kv of e.env)
      if (isObj(kv) && typeof kv.name === 'string' && typeof kv.value === 'string') env[kv.name] = kv.value;
  return { base: path.basename(command as string).replace(/\.exe$/i, ''), args, env };
}

/** `aws eks get-token` or `aws-iam-authenticator token`; Lambda has no binaries to run anything else. */
function readEksPluginFlags({ base, args }: ExecEntry, uName: string, fail: Fail): EksPluginFlags {
  if (base === 'aws' && args.includes('eks') && args.includes('get-token'))
    return {
      plugin: 'aws eks get-token',
      clusterName: flagValue(args, ['--cluster-name', '--cluster-id']),
      region: flagValue(args, ['--region']),
      roleArn: flagValue(args, ['--role-arn']),
    };
  if (base === 'aws-iam-authenticator' && args.includes('token'))
    return {
      plugin: 'aws-iam-authenticator',
      clusterName: flagValue(args, ['-i', '--cluster-id']),
      region: flagValue(args, ['--region']),
      roleArn: flagValue(args, ['-r', '--role']),
      externalId: flagValue(args, ['--external-id']),
    };
  return fail(
    `user "${uName}" runs the exec plugin "${base}", which cannot work in Lambda (there are no binaries to run). Use a token or client certificate, or an EKS kubeconfig ("aws eks get-token" / "aws-iam-authenticator token"), whose token fleetscope mints itself`,
  );
}

/** The registration's role wins over the plugin's `--role-arn` / `-r`; either must be usable. */
function eksRole(
  flags: EksPluginFlags,
  assumeRole: AssumeRoleSpec | undefined,
  uName: string,
  fail: Fail,
): AssumeRoleSpec | undefined {
  const { roleArn, externalId } = flags;
  const role =
    assumeRole ?? (roleArn !== undefined ? { roleArn, ...(externalId ? { externalId } : {}) } : undefined);
  if (role) {
    registerSecret(role.externalId);
    const problem = assumeRoleProblem(role);
    if (problem) fail(`user "${uName}" runs ${flags.plugin} with an unusable role: ${problem}`);
  }
  return role;
}
