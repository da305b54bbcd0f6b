import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import { scheduledHandler } from '../shared/handlers.js';
import { buildReportModel } from '../shared/report/build.js';
import { chartLibrarySource } from '../shared/report/chart-library.js';
import { chartsOf } from '../shared/report/charts.js';
import { gatherReportInputs } from '../shared/report/gather.js';
import { renderReportHtml } from '../shared/report/html.js';
import { reportSinkFromEnv } from '../shared/report/sink.js';
import { reportStoresOn } from '../shared/report/stores-dynamo.js';

/** Scheduled (hourly): the fleet report from the table, written to the report bucket (or directory). */
export const handler = scheduledHandler({
  functionId: 'report',
  input: z.object({}).strict(),
  run: async (_input, { deps, logger, metrics }) => {
    const inputs = await gatherReportInputs(reportStoresOn(deps.db, deps.config.table));
    const model = buildReportModel(inputs, new Date());
    const html = renderReportHtml(model, chartLibrarySource());
    const location = await (await reportSinkFromEnv()).write(html);
    const charts = chartsOf(model).length;
    metrics.addMetric('ReportBytes', MetricUnit.Bytes, Buffer.byteLength(html));
    logger.info('report written', { location, clusters: model.summary.clusters, charts });
    return { location, clusters: model.summary.clusters, charts };
  },
});
