/**
 * Reference exchanges recorded from a real kube-apiserver 1.36.2 (test/fixtures/apiserver-1.36.2, made
 * by scripts/record-reference.ts from test/envtest/scenario.ts) for what the 1.32.13 recordings do not
 * cover: pod generation, PodTopologyLabels, the resize admission's 403s, a node-field affinity refused.
 * The same requests sent to a simulated 1.36 cluster must get the real server's answers: status codes,
 * Status reasons, codes and causes, and object shapes (local/fidelity/compare.ts). No server needed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareShapes, compareStatus, isObj } from '../../local/fidelity/compare.js';
import type { RealExchange } from '../../local/fidelity/replay.js';
import { Values } from '../../local/fidelity/values.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { REFERENCE_CLUSTER } from '../envtest/scenario.js';
import { raw } from './helpers.js';

const reference = JSON.parse(
  readFileSync(new URL('../fixtures/apiserver-1.36.2/exchanges.json', import.meta.url), 'utf8'),
) as { server: string; exchanges: RealExchange[] };

describe(`replay of the exchanges recorded from kube-apiserver ${reference.server}`, () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ clusters: [REFERENCE_CLUSTER], now: Date.parse('2026-11-26T00:00:00Z') });
  });
  afterAll(async () => sim?.stop());

  it('has the exchanges, refusals among them', () => {
    expect(reference.exchanges.length).toBeGreaterThanOrEqual(15);
    expect(reference.exchanges.filter((e) => e.status === 403).length).toBe(2);
  });

  it('answers each request as the real server did, in order', async () => {
    const c = sim.cluster(REFERENCE_CLUSTER.name);
    const problems: string[] = [];
    for (const ex of reference.exchanges) {
      const got = await raw(c, ex.method, ex.path, { body: ex.body, contentType: ex.contentType });
      const here: string[] = [];
      if (got.status !== ex.status) here.push(`status ${got.status}, real ${ex.status}`);
      else if (isObj(ex.response) && ex.response.kind === 'Status')
        compareStatus(got.json, ex.response, here, { normalize: Values.normalize });
      else if (isObj(ex.response)) compareShapes(got.json, ex.response, 'body', here);
      problems.push(...here.map((p) => `${ex.method} ${ex.path}: ${p}`));
    }
    expect(problems).toEqual([]);
  });
});
