/**
 * What a stack update would do to the resources that hold data, judged from two templates: a stateful
 * resource of the previous release that is gone (its logical id no longer in the template: deleted, or
 * replaced by another id), changed type, or changed a property CloudFormation can only change by
 * replacing the resource (a new, empty one). The properties are CloudFormation's "Update requires:
 * Replacement" ones of each type, as far as this stack uses them.
 */
import type { Json } from './synth.js';

/** Per stateful type, the properties whose change replaces the resource. */
export const REPLACED_BY: Record<string, string[]> = {
  'AWS::DynamoDB::GlobalTable': ['TableName', 'KeySchema', 'LocalSecondaryIndexes'],
  'AWS::DynamoDB::Table': ['TableName', 'KeySchema', 'LocalSecondaryIndexes'],
  'AWS::S3::Bucket': ['BucketName', 'ObjectLockEnabled'],
  'AWS::SQS::Queue': ['QueueName', 'FifoQueue'],
  'AWS::Logs::LogGroup': ['LogGroupName'],
  'AWS::Events::Archive': ['ArchiveName', 'SourceArn'],
};

export const isStateful = (r: Json): boolean => r.Type in REPLACED_BY;

/** The key attributes' types: changing one is a new key schema, even with the same names. */
const keyTypes = (r: Json): string =>
  JSON.stringify(
    (r.Properties?.KeySchema ?? []).map((k: Json) =>
      (r.Properties.AttributeDefinitions ?? []).find((a: Json) => a.AttributeName === k.AttributeName),
    ),
  );

/** Every way the update from `previous` to `current` would lose a stateful resource's data. */
export function statefulLosses(previous: Record<string, Json>, current: Record<string, Json>): string[] {
  const out: string[] = [];
  for (const [id, before] of Object.entries(previous)) {
    if (!isStateful(before)) continue;
    const after = current[id];
    if (!after) {
      out.push(`${id} (${before.Type}) would be deleted: its logical id is gone`);
      continue;
    }
    if (after.Type !== before.Type) {
      out.push(`${id} would be replaced: ${before.Type} becomes ${after.Type}`);
      continue;
    }
    for (const p of REPLACED_BY[before.Type]!) {
      const [a, b] = [before.Properties?.[p], after.Properties?.[p]];
      if (JSON.stringify(a) !== JSON.stringify(b))
        out.push(
          `${id} (${before.Type}) would be replaced: ${p} ${JSON.stringify(a)} -> ${JSON.stringify(b)}`,
        );
    }
    const sameKeys =
      JSON.stringify(before.Properties?.KeySchema) === JSON.stringify(after.Properties?.KeySchema);
    if (before.Type.startsWith('AWS::DynamoDB::') && sameKeys && keyTypes(before) !== keyTypes(after))
      out.push(`${id} (${before.Type}) would be replaced: its key attributes' types change`);
  }
  return out;
}
