/**
 * The fidelity replay itself (npm run fidelity): a simulated cluster's recording of ordinary requests
 * (reads, writes, a stale update, a custom resource, a pod and its in-place resize) replays against the
 * real server with no divergence, and a recording whose answer was falsified is caught.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { replayRecording } from '../../local/fidelity/replay.js';
import { startSimulator } from '../../local/sim/index.js';
import { RECORD_ENV } from '../../local/sim/recorder.js';
import { describeRealApiserver, SKEW_VERSIONS } from '../support/real-apiserver.js';
import { ordinaryTraffic } from './scenario.js';

describeRealApiserver(
  'fidelity replay',
  (server, version) => {
    let dir: string;
    let recording: string;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'fleetscope-fidelity-test-'));
      process.env[RECORD_ENV] = dir;
      const sim = await startSimulator({
        clusters: [{ name: 'recorded', nodes: 1, kubernetesVersion: `${version}.0` }],
      });
      delete process.env[RECORD_ENV];
      try {
        await ordinaryTraffic(sim.cluster('recorded'));
      } finally {
        await sim.stop();
      }
      recording = join(dir, readdirSync(dir)[0] as string);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('replays a recording with no divergence from the real server', async () => {
      const result = await replayRecording(recording, server.api());
      expect([...result.refusedWrites.keys()]).toEqual([]);
      expect(result.divergences.map((d) => `${d.request}: ${d.problems.join('; ')}`)).toEqual([]);
      expect(result.replayed).toBeGreaterThanOrEqual(15);
    });

    it('catches a recorded answer that the real server does not give', async () => {
      // In a namespace of its own, so that it does not meet the first replay's objects on the same server.
      const lines = readFileSync(recording, 'utf8')
        .replaceAll('fidelity', 'forged')
        .split('\n')
        .filter(Boolean);
      // Pretend the simulator accepted the stale update.
      const stale = lines.findIndex((l) => l.includes('"status":409'));
      expect(stale).toBeGreaterThan(0);
      lines[stale] = (lines[stale] as string).replace('"status":409', '"status":200');
      const forged = join(dir, 'forged.jsonl');
      writeFileSync(forged, `${lines.join('\n')}\n`);
      const result = await replayRecording(forged, server.api());
      expect(result.divergences.map((d) => d.signature)).toEqual([
        'PUT /api/v1/namespaces/{ns}/configmaps/{name}: 200 in the simulator, 409 in the real server',
      ]);
    });
  },
  { versions: SKEW_VERSIONS },
);
