/**
 * `npm run soak [-- --long | --short] [--cycles N --clusters N --kills N --seed N --keep]`: figures,
 * not a test (the short configuration runs in `npm test`). Exits 1 when an invariant is broken.
 */
import { parseArgs } from 'node:util';
import { FULL, LONG, SHORT, type SoakConfig } from './config.js';
import { formatReport } from './report.js';
import { runSoak } from './run.js';

const { values } = parseArgs({
  options: {
    short: { type: 'boolean' },
    long: { type: 'boolean' },
    keep: { type: 'boolean' },
    cycles: { type: 'string' },
    clusters: { type: 'string' },
    kills: { type: 'string' },
    seed: { type: 'string' },
  },
  strict: true,
});
if (values.short && values.long) throw new Error('--short and --long: give one of them');
const cfg: SoakConfig = { ...(values.short ? SHORT : values.long ? LONG : FULL) };
for (const k of ['cycles', 'clusters', 'kills', 'seed'] as const) {
  const v = values[k];
  if (v === undefined) continue;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${k} must be a whole number`);
  cfg[k] = n;
}
process.env.FLEETSCOPE_LOG_LEVEL ??= 'SILENT';
const report = await runSoak(cfg, {
  keep: values.keep,
  onCycle: (c) => {
    if (c % 10 === 0) process.stderr.write(`cycle ${c}/${cfg.cycles + cfg.settleCycles}\n`);
  },
});
console.log(formatReport(report));
process.exit(report.invariants.every((i) => i.violations.length === 0) ? 0 : 1);
