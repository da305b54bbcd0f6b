/**
 * Replays one simulated cluster's recording against a real kube-apiserver: the simulator's own writes
 * are done again as the admin (world.ts), each recorded request is sent as the same user with the real
 * server's resourceVersions and UIDs, and the two answers are compared (compare.ts).
 */
import { readFileSync } from 'node:fs';
import type { RealApiserver } from '../envtest/apiserver.js';
import type { RecordLine } from '../sim/recorder.js';
import { compareShapes, compareStatus, isObj, type J } from './compare.js';
import { type Answer, send } from './http.js';
import { Values } from './values.js';
import { World } from './world.js';

type RequestLine = Extract<RecordLine, { t: 'request' }>;

export interface Divergence {
  /** What kind of request (method and path with names as placeholders) and how the status differed. */
  signature: string;
  request: string;
  problems: string[];
}

export interface ReplayResult {
  recording: string;
  testFile?: string;
  replayed: number;
  matched: number;
  skipped: Map<string, number>;
  divergences: Divergence[];
  /** The simulator's own writes the real server refused (the world then differs). */
  refusedWrites: Map<string, number>;
  /** Each replayed request as the simulator got it, with the real server's answer (reference exchanges). */
  exchanges: RealExchange[];
}

export interface RealExchange {
  method: string;
  path: string;
  contentType?: string;
  body?: string;
  status: number;
  response: J;
}

const SIM_ADMIN = 'fleetscope-sim';
/** A pause after a CRD update, for the real server to serve the new schema (its handler is rebuilt asynchronously). */
const SCHEMA_SETTLES_MS = 1000;

export async function replayRecording(file: string, api: RealApiserver): Promise<ReplayResult> {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RecordLine);
  const values = new Values();
  const admin = await api.credentials();
  const world = new World(api, admin, values);
  const result: ReplayResult = {
    recording: file,
    testFile: lines[0]?.t === 'start' ? lines[0].testFile : undefined,
    replayed: 0,
    matched: 0,
    skipped: new Map(),
    divergences: [],
    refusedWrites: world.refused,
    exchanges: [],
  };
  const who = identities(api);
  let seeded = false;
  for (const line of worldFirst(lines)) {
    if (!seeded && line.t !== 'world') {
      seeded = true;
      // Admission reads nodes and namespaces from the server's informer caches, a moment behind etcd.
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (line.t === 'world' || (line.t === 'write' && line.type === 'ADDED'))
      await world.added(line.collection, line.object);
    else if (line.t === 'write' && line.type === 'MODIFIED')
      await world.modified(line.collection, line.object, line.prev);
    else if (line.t === 'write' && line.type === 'DELETED') await world.deleted(line.collection, line.object);
    else if (line.t === 'request') await replayRequest(line, values, who, api, result, world);
  }
  return result;
}

/** The world's namespaces and CRDs before what lives in them (the simulator lists its collections by age). */
function worldFirst(lines: RecordLine[]): RecordLine[] {
  const rank = (l: RecordLine) =>
    l.t !== 'world'
      ? 3
      : l.collection === 'namespaces'
        ? 0
        : l.collection.startsWith('customresourcedefinitions.')
          ? 1
          : 2;
  return [...lines].sort((a, b) => rank(a) - rank(b));
}

async function replayRequest(
  line: RequestLine,
  values: Values,
  who: (u: RequestLine['user']) => ReturnType<RealApiserver['credentials']>,
  api: RealApiserver,
  result: ReplayResult,
  world: World,
): Promise<void> {
  const skip = skipReason(line);
  if (skip) {
    result.skipped.set(skip, (result.skipped.get(skip) ?? 0) + 1);
    return;
  }
  const credentials = await who(line.user);
  const path = values.rewritePath(line.path);
  const body = await requestBody(line, values, api, credentials, path);
  const real = await send(api, credentials, line.method, path, body, line.contentType);
  result.replayed++;
  const { method, path: simPath, contentType, body: simBody } = line;
  result.exchanges.push({
    method,
    path: simPath,
    contentType,
    body: simBody,
    status: real.status,
    response: real.json ?? real.text,
  });
  const problems = compareAnswers(line, real);
  if (line.status < 300 && real.status < 300) values.learn(line.response, real.json);
  // A real server serves a new CRD's resources only once it is Established, and a changed schema a
  // moment after the update (its handler is rebuilt from the informer); the simulator at once.
  if (real.status === 201 && real.json?.kind === 'CustomResourceDefinition')
    await world.established(real.json);
  else if (real.status === 200 && real.json?.kind === 'CustomResourceDefinition' && line.method !== 'GET')
    await new Promise((r) => setTimeout(r, SCHEMA_SETTLES_MS));
  if (problems.length === 0) result.matched++;
  else
    result.divergences.push({
      signature: `${line.method} ${template(line.path)}: ${line.status} in the simulator, ${real.status} in the real server`,
      request: `${line.method} ${line.path}`,
      problems,
    });
}

function compareAnswers(line: RequestLine, real: Answer): string[] {
  const problems: string[] = [];
  if (line.status !== real.status) {
    const why =
      real.json?.kind === 'Status'
        ? `${real.json.reason}: ${String(real.json.message).split('\n')[0]}`
        : real.text.slice(0, 200);
    problems.push(`status ${line.status} in the simulator, ${real.status} in the real server (${why})`);
    return problems;
  }
  if (isObj(line.response) && line.response.kind === 'Status')
    compareStatus(line.response, real.json, problems, { normalize: Values.normalize });
  else if (line.response !== undefined) compareShapes(line.response, real.json, 'body', problems);
  return problems.map((p) => p.replace(/\[\d+\]/g, '[*]')).filter((p, i, all) => all.indexOf(p) === i);
}

/** The body with the real server's values; a resourceVersion it never showed is the object's current one. */
async function requestBody(
  line: RequestLine,
  values: Values,
  api: RealApiserver,
  who: J,
  path: string,
): Promise<string | undefined> {
  if (line.body === undefined) return undefined;
  let parsed: J;
  try {
    parsed = JSON.parse(line.body);
  } catch {
    return line.body;
  }
  const body = values.rewriteBody(parsed);
  const rv = body?.metadata?.resourceVersion;
  if (typeof rv === 'string' && rv.startsWith('unknown:')) {
    const current = await send(api, who, 'GET', path.split('?')[0] as string);
    body.metadata.resourceVersion = current.json?.metadata?.resourceVersion;
  }
  if (typeof body?.metadata?.uid === 'string' && body.metadata.uid.startsWith('unknown:'))
    delete body.metadata.uid;
  return JSON.stringify(body);
}

function skipReason(line: RequestLine): string | undefined {
  const q = new URL(line.path, 'https://x').searchParams;
  if (q.get('watch') === 'true' || q.get('watch') === '1' || line.path.includes('/watch/'))
    return 'watches (streamed; compared by the watch tests)';
  if (line.path.startsWith('/apis/metrics.k8s.io'))
    return 'metrics.k8s.io (served by an aggregated metrics server, not the apiserver)';
  return undefined;
}

/** Credentials per recorded user: the simulator's admin is the real server's. */
function identities(api: RealApiserver) {
  const cache = new Map<string, ReturnType<RealApiserver['credentials']>>();
  return (user: RequestLine['user']) => {
    if (!user || user.username === SIM_ADMIN) return api.credentials();
    const groups = user.groups.filter((g) => g !== 'system:authenticated');
    const key = `${user.username}\u0000${groups.join(',')}`;
    let c = cache.get(key);
    if (!c) {
      c = api.credentials(user.username, groups);
      cache.set(key, c);
    }
    return c;
  };
}

/** A request path with its names as placeholders: /api/v1/namespaces/{ns}/pods/{name}/resize. */
export function template(path: string): string {
  const [p = ''] = path.split('?');
  const parts = p.split('/').filter(Boolean);
  const head = parts[0] === 'api' ? 2 : parts[0] === 'apis' ? 3 : parts.length;
  const rest = parts.slice(head);
  const out = parts.slice(0, head);
  if (rest[0] === 'namespaces' && rest.length >= 3)
    out.push(
      'namespaces',
      '{ns}',
      ...rest.slice(2, 3),
      ...rest.slice(3, 4).map(() => '{name}'),
      ...rest.slice(4),
    );
  else out.push(...rest.slice(0, 1), ...rest.slice(1, 2).map(() => '{name}'), ...rest.slice(2));
  return `/${out.join('/')}`;
}
