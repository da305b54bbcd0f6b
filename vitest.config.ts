import { defineConfig } from 'vitest/config';

/**
 * The suites in four parts, by file name, so one part can run alone (`npm run test:unit` etc.);
 * `npm test` runs them all. What needs a tool a machine may lack is in its own part: a real
 * kube-apiserver (*.real.test.ts) or Chromium (the report's browser test).
 */
const BROWSER = ['test/report/browser.sim.test.ts'];
const REAL = ['test/**/*.real.test.ts'];
/** Suites that start the Kubernetes API simulator or the local runtime (dynalite, bus, simulator). */
const SIM = [
  'test/**/*.sim.test.ts',
  'test/sim/**/*.test.ts',
  'test/local/**/*.test.ts',
  'test/fuzz/**/*.test.ts',
  'test/claims/membership.test.ts',
];
const ALL = ['test/**/*.test.ts'];

// Integration tests start real servers (dynalite, the Kubernetes API simulator, etcd and
// kube-apiserver) on loopback ports; they are bounded but not instant, so the timeouts are generous.
// Three workers on CI's 2 cores: much of a suite's time is spent waiting (a real server's watch cache,
// its controllers, child processes), and with two workers the run took 882 s where three took 730 s.
export default defineConfig({
  test: {
    reporters: ['default', './test/support/count-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The CLI's bundle, built once (when stale) before tests that run bin/fleetscope.js as a process.
    globalSetup: ['./test/support/build-cli.ts'],
    pool: 'forks',
    maxWorkers: 3,
    env: { FLEETSCOPE_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', AWS_REGION: 'us-east-1' },
    projects: [
      { extends: true, test: { name: 'unit', include: ALL, exclude: [...SIM, ...REAL, ...BROWSER] } },
      { extends: true, test: { name: 'sim', include: SIM, exclude: [...REAL, ...BROWSER] } },
      { extends: true, test: { name: 'real', include: REAL } },
      { extends: true, test: { name: 'browser', include: BROWSER } },
    ],
  },
});
