/**
 * Records what one simulated cluster saw, so that `npm run fidelity` can replay it against a real
 * kube-apiserver: the world when recording began, every request (method, path and query, body, who
 * asked) with the simulator's answer, and every write the simulator made on its own between requests
 * (kubelets, scheduler, controllers, a test's direct seeding), in the order they happened.
 *
 * Set FLEETSCOPE_SIM_RECORD=DIR and each simulated cluster writes DIR/<pid>-<n>-<cluster>.jsonl.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Json } from './json.js';
import type { Store, StoreEvent } from './store.js';

export const RECORD_ENV = 'FLEETSCOPE_SIM_RECORD';

export interface RecordedIdentity {
  username: string;
  groups: string[];
}

/** One line of a recording. */
export type RecordLine =
  | {
      t: 'start';
      cluster: string;
      version: string;
      testFile?: string;
      /** False for a cluster configured without pods/resize, which no real server of its version is. */
      resize?: boolean;
    }
  | { t: 'world'; collection: string; object: Json }
  | { t: 'write'; type: StoreEvent['type']; collection: string; object: Json; prev?: Json }
  | {
      t: 'request';
      method: string;
      path: string;
      contentType?: string;
      body?: string;
      user?: RecordedIdentity;
      status: number;
      responseType?: string;
      response?: Json;
      text?: string;
    };

export interface RequestRecord {
  method: string;
  path: string;
  contentType?: string;
  body?: string;
  user?: RecordedIdentity;
}

interface Answer {
  status: number;
  json?: Json;
  text?: string;
  contentType?: string;
}

let sequence = 0;

export class Recorder {
  /** True while the handler serves a request: its writes are the request's, not the simulator's own. */
  private serving = false;

  private constructor(private readonly file: string) {}

  /** A recorder for a new cluster when FLEETSCOPE_SIM_RECORD is set; undefined otherwise. */
  static fromEnv(
    cluster: string,
    version: string,
    store: Store,
    served: { resize: boolean },
  ): Recorder | undefined {
    const dir = process.env[RECORD_ENV];
    if (!dir) return undefined;
    mkdirSync(dir, { recursive: true });
    const safe = cluster.replace(/[^A-Za-z0-9_.-]/g, '_');
    const file = join(dir, `${process.pid}-${++sequence}-${safe}.jsonl`);
    writeFileSync(file, '');
    const r = new Recorder(file);
    const testFile = process.env.VITEST_TEST_FILE ?? currentTestFile();
    r.line({ t: 'start', cluster, version, testFile, resize: served.resize });
    for (const [collection, objects] of store.contents())
      for (const object of objects) r.line({ t: 'world', collection, object });
    store.subscribe((ev) => {
      if (!r.serving)
        r.line({ t: 'write', type: ev.type, collection: ev.collection, object: ev.object, prev: ev.prev });
    });
    return r;
  }

  /**
   * Runs the handler with its writes attributed to the request, and records the request with its answer
   * before anything the simulator then does on its own (a CRD's conditions, a kubelet's answer).
   */
  serve<T extends Answer>(req: RequestRecord, fn: () => T): T {
    this.serving = true;
    try {
      const reply = fn();
      this.request(req, reply.status, reply);
      return reply;
    } catch (e) {
      const status = e as { code?: number; toStatus?: () => Json };
      if (typeof status.toStatus === 'function')
        this.request(req, status.code ?? 500, { json: status.toStatus() });
      throw e;
    } finally {
      this.serving = false;
    }
  }

  request(req: RequestRecord, status: number, answer: Omit<Answer, 'status'>): void {
    this.line({
      t: 'request',
      ...req,
      status,
      responseType: answer.contentType,
      response: answer.json,
      text: answer.text,
    });
  }

  private line(l: RecordLine): void {
    appendFileSync(this.file, `${JSON.stringify(l)}\n`);
  }
}

/** vitest names the running file in its worker's state; outside vitest there is none. */
function currentTestFile(): string | undefined {
  const state = (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__;
  return state?.filepath;
}
