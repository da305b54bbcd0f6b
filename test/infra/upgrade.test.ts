/**
 * Upgrades and rollback of the stack itself. The stateful resources of the previous release's template
 * (a committed snapshot, fixtures/release-*.stateful.json) against this tree's template, in every mode:
 * an update that would delete or replace a table, bucket, queue, log group or the event archive fails
 * here before it loses data in an account. And the tables and buckets outlive the stack unless the
 * operator asks (context retainData=false). docs/operations.md says how to upgrade and roll back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../infra/paths.js';
import { statefulLosses } from './stateful.js';
import { type Json, ofType, synth } from './synth.js';

const FIXTURE = join(REPO_ROOT, 'test', 'infra', 'fixtures', 'release-0.1.0.stateful.json');
const previous = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { Resources: Record<string, Json> }).Resources;
const DATA_TYPES = ['AWS::DynamoDB::GlobalTable', 'AWS::S3::Bucket'];

describe('upgrading from the previous release', () => {
  it('the snapshot holds the tables, buckets, queues, log groups and archive of that release', () => {
    const types = new Set(Object.values(previous).map((r) => r.Type));
    expect([...types].sort()).toEqual([
      'AWS::DynamoDB::GlobalTable',
      'AWS::Events::Archive',
      'AWS::Logs::LogGroup',
      'AWS::S3::Bucket',
      'AWS::SQS::Queue',
    ]);
    expect(ofType(previous, 'AWS::DynamoDB::GlobalTable')).toHaveLength(2);
  });

  for (const [mode, context] of [
    ['no VPC (as the release)', {}],
    ['into a created VPC', { vpc: 'create' }],
  ] as const)
    it(`replaces and deletes no stateful resource: ${mode}`, () => {
      expect(statefulLosses(previous, synth(context).resources)).toEqual([]);
    });

  it('would fail an update that deletes or replaces one (the check can fail)', () => {
    const current = structuredClone(previous);
    const [tableId, table] = ofType(current, 'AWS::DynamoDB::GlobalTable')[0]!;
    table.Properties.KeySchema = [{ AttributeName: 'pk', KeyType: 'HASH' }];
    const [bucketId] = ofType(current, 'AWS::S3::Bucket')[0]!;
    delete current[bucketId];
    const [queueId, queue] = ofType(current, 'AWS::SQS::Queue')[0]!;
    queue.Properties.QueueName = 'renamed';
    const [logsId, logs] = ofType(current, 'AWS::Logs::LogGroup')[0]!;
    delete current[logsId];
    current[`${logsId}Moved`] = logs;
    const [idemId, idem] = ofType(current, 'AWS::DynamoDB::GlobalTable')[1]!;
    const pk = idem.Properties.AttributeDefinitions[0];
    pk.AttributeType = pk.AttributeType === 'S' ? 'N' : 'S';
    expect(statefulLosses(previous, current)).toEqual(
      [
        expect.stringContaining(`${tableId} (AWS::DynamoDB::GlobalTable) would be replaced: KeySchema`),
        `${idemId} (AWS::DynamoDB::GlobalTable) would be replaced: its key attributes' types change`,
        `${bucketId} (AWS::S3::Bucket) would be deleted: its logical id is gone`,
        `${logsId} (AWS::Logs::LogGroup) would be deleted: its logical id is gone`,
        expect.stringContaining(`${queueId} (AWS::SQS::Queue) would be replaced: QueueName`),
      ].sort((a, b) => order(a) - order(b)),
    );
  });
});

/** The checker reports in the snapshot's order; the expectations above are sorted to match it. */
const ids = Object.keys(previous);
const order = (e: unknown): number => {
  const s = typeof e === 'string' ? e : String((e as { sample?: string }).sample ?? '');
  return ids.findIndex((id) => s.startsWith(id));
};

describe('retention on stack deletion', () => {
  it('keeps both tables and both buckets by default, and the registry table deletion-protected', () => {
    const { resources } = synth();
    for (const type of DATA_TYPES)
      for (const [id, r] of ofType(resources, type)) {
        expect(r.DeletionPolicy, id).toBe('Retain');
        expect(r.UpdateReplacePolicy, id).toBe('Retain');
      }
    const protectedTables = ofType(resources, 'AWS::DynamoDB::GlobalTable').filter(
      ([, t]) => t.Properties.Replicas[0].DeletionProtectionEnabled,
    );
    expect(protectedTables).toHaveLength(1);
  });

  it('deletes them with the stack only when the operator asks (retainData=false)', () => {
    const { resources } = synth({ retainData: 'false' });
    for (const type of DATA_TYPES)
      for (const [id, r] of ofType(resources, type)) expect(r.DeletionPolicy, id).toBe('Delete');
    for (const [, t] of ofType(resources, 'AWS::DynamoDB::GlobalTable'))
      expect(t.Properties.Replicas[0].DeletionProtectionEnabled ?? false).toBe(false);
  });
});
