/** Shared pieces of the fuzz tests: mutations of valid inputs, and a fingerprint of every stored item. */

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { formatPath } from '../../shared/platform/validation.js';

export type Path = (string | number)[];

/** Every path into a JSON value (objects' keys and arrays' indices), the root excluded. */
export function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value as Record<string, unknown>);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k])]);
}

export type Mutation = { path: Path; op: 'delete' } | { path: Path; op: 'set'; value: unknown };

/** A value of any JSON shape, including the awkward ones (huge, negative, empty, control characters). */
export const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -1e9, max: 1e9 }),
  fc.double(),
  fc.string({ maxLength: 40 }),
  fc.constant(''),
  fc.constant('x'.repeat(2000)),
  fc.constant('\u0000\n../..'),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.integer(), { maxKeys: 3 }),
);

export function mutationOf(value: unknown): fc.Arbitrary<Mutation> {
  const paths = pathsOf(value);
  return fc.oneof(
    fc.constantFrom(...paths).map((path) => ({ path, op: 'delete' as const })),
    fc.tuple(fc.constantFrom(...paths), junk).map(([path, v]) => ({ path, op: 'set' as const, value: v })),
  );
}

export function apply(value: unknown, m: Mutation): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (const k of m.path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = m.path[m.path.length - 1] as string | number;
  if (m.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = m.value;
  return copy;
}

export const pathText = (p: Path) => formatPath(p);

/** Every item of the tables, as one string: equal before and after means nothing was written. */
export async function fingerprint(db: DynamoDBDocumentClient, tables: string[]): Promise<string> {
  const parts: string[] = [];
  for (const table of tables) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }),
      );
      for (const item of page.Items ?? []) parts.push(JSON.stringify(item));
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return parts.sort().join('\n');
}
