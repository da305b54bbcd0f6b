import { type FeatureCatalog, UnknownFeatureError } from '../../shared/features/catalog.js';
import { parseRef } from '../../shared/features/model.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { UsageError } from '../command.js';

/** The feature named by --feature, known to the catalog; a usage error naming --feature otherwise. */
export function featureOf(catalog: FeatureCatalog, flag: string | undefined, what: string): FeatureSpec {
  if (!flag) throw new UsageError(`${what} needs --feature`);
  try {
    return catalog.need(parseRef(flag));
  } catch (err) {
    if (err instanceof UnknownFeatureError) throw new UsageError(`--feature: ${err.message}`);
    throw err;
  }
}
