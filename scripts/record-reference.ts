/**
 * Records reference exchanges from a real kube-apiserver 1.36 for what the 1.32.13 recordings do not
 * cover (test/envtest/scenario.ts: the resize admission, pod generation and topology labels, a
 * node-field affinity refused): the simulator's requests, each with the real server's answer.
 *
 *   FLEETSCOPE_KUBE_ASSETS=DIR npx tsx scripts/record-reference.ts
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRealApiserver } from '../local/envtest/apiserver.js';
import { findKubeAssets } from '../local/envtest/assets.js';
import { replayRecording } from '../local/fidelity/replay.js';
import { startSimulator } from '../local/sim/index.js';
import { RECORD_ENV } from '../local/sim/recorder.js';
import { ordinaryTraffic, REFERENCE_CLUSTER } from '../test/envtest/scenario.js';

const lookup = findKubeAssets();
if (!lookup.ok) throw new Error(lookup.why);
const dir = mkdtempSync(join(tmpdir(), 'fleetscope-reference-'));
process.env[RECORD_ENV] = dir;
const sim = await startSimulator({ clusters: [REFERENCE_CLUSTER], now: Date.parse('2026-11-26T00:00:00Z') });
delete process.env[RECORD_ENV];
await ordinaryTraffic(sim.cluster(REFERENCE_CLUSTER.name));
await sim.stop();
const api = await startRealApiserver(lookup.assets, { version: '1.36' });
try {
  const result = await replayRecording(join(dir, readdirSync(dir)[0] as string), api);
  const out = new URL('../test/fixtures/apiserver-1.36.2/exchanges.json', import.meta.url);
  writeFileSync(
    out,
    `${JSON.stringify({ server: api.version, cluster: REFERENCE_CLUSTER, exchanges: result.exchanges }, null, 1)}\n`,
  );
  process.stdout.write(
    `${result.exchanges.length} exchanges from ${api.version}, ${result.divergences.length} divergent\n`,
  );
} finally {
  await api.stop();
}
