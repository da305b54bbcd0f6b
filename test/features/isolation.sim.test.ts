/**
 * One feature whose record DynamoDB refuses (issue 34, defect 8: an oversize declaration's record over
 * the 400 KB item limit) is that feature's error, shown in its outcome and counted: the features after
 * it in the catalog are still reconciled, and the pass goes on.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FeatureCatalog } from '../../shared/features/catalog.js';
import type { FeatureRecord } from '../../shared/features/model.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { testFeature } from './fixtures.js';
import { type FeatureEnv, startFeatureEnv } from './helpers.js';

const declared = (name: string) => testFeature({ namespace: 'acme', name });

let env: FeatureEnv;
beforeAll(async () => {
  env = await startFeatureEnv([{ name: 'iso', nodes: 0, seed: 4 }]);
});
afterAll(async () => env?.stop());

it('a feature whose record is refused does not stop the features after it', async () => {
  const [huge, after] = [declared('huge'), declared('after')];
  // DynamoDB's answer to an item over 400 KB, for the first feature's record only.
  class Refusing extends DynamoFeatureStore {
    override async create(r: FeatureRecord): Promise<boolean> {
      if (r.name === 'huge') throw new Error('Item size has exceeded the maximum allowed size');
      return super.create(r);
    }
  }
  const store = new Refusing(env.runtime.db, env.runtime.table);
  const counted: string[] = [];
  const outcomes = await env.reconcile('iso', undefined, {
    store,
    catalog: new FeatureCatalog([huge, after]),
    mirror: false,
    count: (m) => void counted.push(m),
  });
  expect(outcomes.map((o) => [o.feature, o.error ?? o.state])).toEqual([
    ['acme/huge', 'Item size has exceeded the maximum allowed size'],
    ['acme/after', 'On'],
  ]);
  expect(counted).toContain('FeatureReconcileErrors');
  expect((await env.store.get('iso', after))?.state).toBe('On');
});
