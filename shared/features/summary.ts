/** The features part of `npm start`'s summary: each cluster's features by state, and what moves. */
import { clipWords, textTable } from '../kernel/text-table.js';
import type { FeatureStore } from './store.js';
import { featureJson, waitingCell } from './views.js';

export async function featureSummaryLines(store: Pick<FeatureStore, 'listAll'>): Promise<string[]> {
  const records = await store.listAll();
  if (records.length === 0) return ['features: none announced yet'];
  const count = (s: string) => records.filter((r) => r.state === s).length;
  const lines = [
    `features: ${records.length} (cluster, feature) record(s): ${count('On')} On, ${count('Off')} Off, ${count('TurningOn')} TurningOn, ${count('TurningOff')} TurningOff`,
  ];
  const moving = records
    .filter((r) => r.state === 'TurningOn' || r.state === 'TurningOff')
    .map((r) => featureJson(r, []));
  if (moving.length)
    lines.push(
      ...textTable([
        ['CLUSTER', 'FEATURE', 'STATE', 'TASK', 'WAITING FOR'],
        ...moving.map((f) => [
          f.cluster,
          f.feature,
          f.state,
          f.tasks[0]?.title ?? '',
          clipWords(waitingCell(f), 80),
        ]),
      ]),
    );
  return lines;
}
