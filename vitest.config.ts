import { defineConfig } from 'vitest/config';

// Integration tests start real servers (dynalite, the Kubernetes API simulator) on loopback ports;
// they are bounded but not instant, so the timeouts are generous and the pool is sized for 2 cores.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/count-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The CLI's bundle, built once before tests that run bin/fleetscope.js as a process.
    globalSetup: ['./test/support/build-cli.ts'],
    pool: 'forks',
    maxWorkers: 2,
    env: { FLEETSCOPE_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', AWS_REGION: 'us-east-1' },
  },
});
