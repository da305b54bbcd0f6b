import { type FeatureCatalog, UnknownFeatureError } from '../../shared/features/catalog.js';
import { parseRef } from '../../shared/features/model.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { rfc1123LabelProblem } from '../../shared/kernel/names.js';
import { UsageError } from '../command.js';

/**
 * The feature named by --feature, known to the catalog. A name that cannot be a feature's is a usage
 * error (2); one this fleet does not know is a name that does not exist (1): another fleet may have it.
 */
export function featureOf(catalog: FeatureCatalog, flag: string | undefined, what: string): FeatureSpec {
  if (!flag) throw new UsageError(`${what} needs --feature`);
  const ref = parseRef(flag);
  const problem =
    rfc1123LabelProblem(ref.namespace, 'feature namespace') ?? rfc1123LabelProblem(ref.name, 'feature name');
  if (problem) throw new UsageError(`--feature ${flag}: ${problem}`);
  try {
    return catalog.need(ref);
  } catch (err) {
    if (err instanceof UnknownFeatureError) throw new Error(`--feature: ${err.message}`);
    throw err;
  }
}
