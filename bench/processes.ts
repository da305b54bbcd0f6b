/** The benchmark's child processes (each part in its own process) and the simulator's control API. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { parse } from 'yaml';
import { CYCLE, cycleCapability } from '../shared/cycle/capability.js';
import { CLUSTER } from './spec.js';

const CYCLE_V8_FLAGS = cycleCapability.functions.find((f) => f.id === CYCLE)?.v8Flags ?? [];

const ROOT = join(import.meta.dirname, '..');

export interface Child {
  proc: ChildProcess;
  first: Promise<Record<string, unknown>>;
}

export function child(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  heapMb?: number,
): Child {
  // The cycle function's V8 flags (its NODE_OPTIONS in Lambda), for its cycles and their floors alike.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? CYCLE_V8_FLAGS.join(' ')).split(' ').filter(Boolean);
  const proc = spawn(
    process.execPath,
    [
      ...(heapMb ? [`--max-old-space-size=${heapMb}`] : []),
      ...(['cycle.ts', 'floor.ts', 'balloon-cycle.ts', 'balloon-floor.ts', 'reads-cycle.ts'].includes(script)
        ? nodeArgs
        : []),
      '--import',
      'tsx',
      join(ROOT, 'bench', script),
      ...args,
    ],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, FLEETSCOPE_LOG_LEVEL: 'SILENT' },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const first = new Promise<Record<string, unknown>>((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    rl.once('line', (line) => {
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`${script} printed ${line}`));
      }
    });
    proc.once('exit', (code) => reject(new Error(`${script} exited with ${code} before reporting`)));
  });
  return { proc, first };
}

export async function once(script: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const c = child(script, [], env);
  const out = await c.first;
  await new Promise((r) => c.proc.once('exit', r));
  return out;
}

/**
 * The simulator's control endpoints (/_sim/stats, /_sim/clock), with the kubeconfig's credentials; also
 * any API request of the bench's own (a patch: give its content type). A request whose connection failed
 * before any answer (a reset, a refused connection) is sent again, up to 3 times, unless it is a POST
 * (advancing the clock twice would skew every figure after it); then it rejects, naming the request.
 */
export function simControl(kubeconfig: {
  server: string;
  ca: Buffer | string;
  /** A bearer token (the simulator's), or a client certificate (a real kube-apiserver's admin). */
  token?: string;
  cert?: string;
  key?: string;
}) {
  const { cert, key } = kubeconfig;
  const agent = new https.Agent({ ca: kubeconfig.ca, keepAlive: true, ...(cert ? { cert, key } : {}) });
  const auth: Record<string, string> = kubeconfig.token
    ? { authorization: `Bearer ${kubeconfig.token}` }
    : {};
  const once = (method: string, path: string, body: unknown, contentType: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = https.request(
        new URL(path, kubeconfig.server),
        {
          agent,
          method,
          headers: { ...auth, 'content-type': contentType },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => {
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString() || '{}'));
            } catch {
              reject(new Error(`${method} ${path}: answered ${res.statusCode} with a body that is not JSON`));
            }
          });
          res.on('error', (e) => reject(Object.assign(e, { answered: true })));
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  return async (
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<Record<string, unknown>> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(method, path, body, contentType);
      } catch (e) {
        const err = e as Error & { code?: string; answered?: boolean };
        if (method === 'POST' || err.answered || attempt >= 3 || !RETRIED_CODES.has(err.code ?? ''))
          throw new Error(`simulator ${method} ${path} failed after ${attempt} attempt(s): ${err.message}`);
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  };
}

/** Connection failures before an answer, where sending the request again is safe. */
const RETRIED_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE']);

/**
 * The simulator and DynamoDB of one bench part, started as children (kept in `children`, so the part's
 * `stopChildren` ends them): the kubeconfig, the simulator's control API, and a DynamoDB client.
 */
export async function startSimAndDynamo(
  dir: string,
  children: ChildProcess[],
  simEnv: Record<string, string>,
  simHeapMb: number,
) {
  const sim = child('sim-server.ts', [dir], simEnv, simHeapMb);
  children.push(sim.proc);
  const dynamo = child('dynamo-server.ts', []);
  children.push(dynamo.proc);
  const { kubeconfig } = (await sim.first) as { kubeconfig: string };
  const { endpoint } = (await dynamo.first) as { endpoint: string };
  const kc = parse(await readFile(kubeconfig, 'utf8'));
  const cluster = kc.clusters.find((c: { name: string }) => c.name === CLUSTER).cluster;
  const control = simControl({
    server: cluster.server,
    ca: Buffer.from(cluster['certificate-authority-data'], 'base64'),
    token: kc.users.find((u: { name: string }) => u.name === CLUSTER).user.token,
  });
  const ddb = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
  const db = DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } });
  return { kubeconfig, endpoint, control, ddb, db };
}

/** Ends a part's children (stdin closed first, killed if still there) and removes its directory. */
export async function stopChildren(children: ChildProcess[], dir: string): Promise<void> {
  for (const c of children) c.stdin?.end();
  await new Promise((r) => setTimeout(r, 200));
  for (const c of children) if (c.exitCode === null) c.kill();
  await rm(dir, { recursive: true, force: true });
}
