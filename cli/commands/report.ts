import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildReportModel } from '../../shared/report/build.js';
import { chartLibrarySource } from '../../shared/report/chart-library.js';
import { chartsOf } from '../../shared/report/charts.js';
import { gatherReportInputs } from '../../shared/report/gather.js';
import { renderReportHtml } from '../../shared/report/html.js';
import { reportStoresOn } from '../../shared/report/stores-dynamo.js';
import { type CliCommand, decimalFlag, UsageError, writeOutput } from '../command.js';
import {
  parseFlags,
  readStackOutputs,
  registeredCluster,
  stateDirOf,
  targetOptions,
  withContext,
} from '../context.js';
import { outputOptions, structured } from '../output.js';

const usage = `usage:
  fleetscope report [--cluster NAME] --out FILE.html     draw the report from the local state
  fleetscope report [--cluster NAME] -o json|yaml        print the report's figures instead
  fleetscope report --aws [--bucket B] --out FILE.html   fetch the latest scheduled report from S3
  fleetscope report --aws [--bucket B] --url [--expires SECONDS]
                                                         print a presigned link to it (default 1 hour)

  One self-contained HTML file (charts included; it opens without network): node-scoped DaemonSets'
  per-node targets next to the DaemonSet-wide one, requests before and after per cluster, balloon
  capacity per node pool, ClusterSets and claims, and the feature matrix.

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             the deployed stack's hourly report (--stack NAME, default Fleetscope; --region R);
                    the bucket is the stack's ReportBucketName output unless --bucket names it`;

const options = {
  ...targetOptions,
  ...outputOptions,
  cluster: { type: 'string' },
  out: { type: 'string' },
  bucket: { type: 'string' },
  url: { type: 'boolean' },
  expires: { type: 'string' },
} as const;

type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];

export const command: CliCommand = {
  name: 'report',
  summary: 'the fleet as one self-contained HTML report with charts (local state, or the stack’s from S3)',
  usage,
  // Its human form is the HTML file; -o json|yaml print the figures the charts are drawn from.
  outputs: { '': 'manifests' },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    return values.aws ? fromBucket(values) : fromState(values);
  },
};

async function fromState(values: Flags): Promise<number> {
  for (const flag of ['bucket', 'url', 'expires'] as const)
    if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --aws`);
  const print = structured(values);
  if (values.output === 'table' || values.output === 'wide')
    throw new UsageError(
      `-o ${values.output}: the report's human form is the HTML file (--out FILE); -o json|yaml print its figures`,
    );
  if (!print && !values.out) throw new UsageError('report needs --out FILE (or -o json|yaml)');
  if (print && values.out) throw new UsageError('--out and -o json|yaml: choose one');
  const dir = stateDirOf(values);
  if (!existsSync(dir))
    throw new Error(
      `state directory ${dir} does not exist, so there is nothing to report; give --state-dir the directory npm start or an earlier command used`,
    );
  return withContext(values, async (ctx) => {
    if (values.cluster) await registeredCluster(ctx, values.cluster);
    const inputs = await gatherReportInputs(
      reportStoresOn(ctx.db, ctx.table),
      values.cluster ? [values.cluster] : undefined,
    );
    const model = buildReportModel(inputs, new Date(), values.cluster);
    if (print) {
      print(model);
      return 0;
    }
    const out = resolve(values.out!);
    await writeOutput(out, renderReportHtml(model, chartLibrarySource()));
    const s = model.summary;
    console.log(
      `wrote ${out}: ${s.clusters} cluster(s), ${s.nodeScopedDaemonSets} node-scoped DaemonSet(s), ${chartsOf(model).length} chart(s)`,
    );
    return 0;
  });
}

async function fromBucket(values: Flags): Promise<number> {
  if (values.cluster)
    throw new UsageError('--cluster works on the local state; the stored report covers the whole fleet');
  if (values.output || values.json)
    throw new UsageError('-o works on the local state; --aws fetches the HTML report');
  if (values.url && values.out) throw new UsageError('--url and --out: choose one');
  if (!values.url && !values.out) throw new UsageError('report --aws needs --out FILE or --url');
  if (values.expires !== undefined && !values.url) throw new UsageError('--expires goes with --url');
  const { MAX_PRESIGN_SECONDS, fetchLatestReport, presignLatestReport } = await import(
    '../../shared/report/s3.js'
  );
  const expires = decimalFlag('--expires', values.expires ?? '3600', {
    integer: true,
    min: 1,
    max: MAX_PRESIGN_SECONDS,
  });
  const bucket = values.bucket ?? (await stackBucket(values));
  const region = values.region ? { region: values.region } : {};
  if (values.url) {
    console.log(await presignLatestReport(bucket, expires, region));
    return 0;
  }
  const out = resolve(values.out!);
  await writeOutput(out, await fetchLatestReport(bucket, region));
  console.log(`wrote ${out} (the latest report of s3://${bucket})`);
  return 0;
}

async function stackBucket(values: Flags): Promise<string> {
  const { stackName, outputs } = await readStackOutputs(values);
  const bucket = outputs.ReportBucketName;
  if (!bucket)
    throw new Error(
      `stack "${stackName}" has no output ReportBucketName: deploy this version, or pass --bucket`,
    );
  return bucket;
}
