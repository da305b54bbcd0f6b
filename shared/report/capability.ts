import type { FeaturedCapability } from '../features/spec.js';
import { CHART_JS_PACKAGE_PATH } from './chart-library.js';

/**
 * The fleet report: every hour, one self-contained HTML page drawn from the fleetscope table (node-scoped
 * DaemonSets, requests before and after, balloon capacity, ClusterSets and claims, the feature matrix),
 * written to the private report bucket (the state directory locally). Reads DynamoDB only: it never
 * contacts a cluster, so it needs no Kubernetes permission and no kubeconfig.
 */
export const REPORT = 'report';

export const reportCapability: FeaturedCapability = {
  id: REPORT,
  description: 'An hourly HTML report of the fleet, written to a private S3 bucket',
  functions: [
    {
      id: 'report',
      entry: 'functions/report.ts',
      description: 'Writes the fleet report to the report bucket',
      memoryMb: 1024,
      timeoutSeconds: 120,
      access: {
        table: 'read',
        putEvents: false,
        kubeconfigSecrets: false,
        idempotency: false,
        reportBucket: true,
      },
      reservedConcurrency: 1,
      bundleFiles: [CHART_JS_PACKAGE_PATH],
    },
  ],
  schedules: [
    {
      id: 'report',
      description: 'Write the fleet report',
      everyMinutes: 60,
      target: 'report',
      input: {},
      // In a `--once` cycle, after the work whose results it shows.
      after: ['inventory', 'cycle', 'claims-reconcile'],
    },
  ],
  rules: [],
  kubernetes: [],
};
