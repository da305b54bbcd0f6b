/**
 * Fleet-wide: every dead letter explained (its error is one the soak provoked: an injected fault, a
 * lost race on a conditional write), and no secret material anywhere (the canary kubeconfig's tokens,
 * plain or base64, in no log line, event, CLI output, dead letter or DynamoDB item).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { DeadLetter } from '../../local/invoker.js';
import type { Text } from '../records.js';
import type { Invariant, Outcome, SoakState } from '../types.js';

/** The causes the soak provokes, by name; a dead letter matching none is unexplained. */
export const DEAD_LETTER_CAUSES: [string, RegExp][] = [
  [
    'injected fault',
    /\b(429|500|503|409)\b|ECONNRESET|socket hang up|connection (was )?reset|timed out|timeout|unreachable|Too many requests|ServiceUnavailable|InternalError/i,
  ],
  [
    'lost race',
    /ConditionalCheckFailed|conditional request failed|VersionConflict|BaseMoved|was replaced|changed while/i,
  ],
];

const poisonOf = (dl: Pick<DeadLetter, 'event'>): string | undefined => {
  const id = (dl.event as { detail?: { soakPoison?: unknown } } | undefined)?.detail?.soakPoison;
  return typeof id === 'string' ? id : undefined;
};

export function explain(dl: Pick<DeadLetter, 'error' | 'event'>): string | undefined {
  // A malformed event the soak sent, refused with the bad fields named (never processed).
  if (poisonOf(dl)) return /^invalid .*: .+/.test(dl.error) ? 'malformed event refused' : undefined;
  return DEAD_LETTER_CAUSES.find(([, re]) => re.test(dl.error))?.[0];
}

/** Every dead letter has a cause the soak provoked, and every malformed event it sent is one. */
export function judgeDeadLetters(
  dls: Pick<DeadLetter, 'error' | 'event' | 'functionId' | 'source'>[],
  poisoned: string[] = [],
): Outcome & { causes: Record<string, number> } {
  const causes: Record<string, number> = {};
  const violations: string[] = [];
  for (const dl of dls) {
    const why = explain(dl);
    if (why) causes[why] = (causes[why] ?? 0) + 1;
    else violations.push(`${dl.functionId} (${dl.source}): ${dl.error.slice(0, 300)}`);
  }
  const lettered = new Set(dls.map(poisonOf));
  for (const id of poisoned)
    if (!lettered.has(id))
      violations.push(`malformed event ${id} was delivered but is no dead letter (lost, or processed)`);
  return { checked: dls.length, unit: 'dead letters', violations, causes };
}

export function canaryForms(canaries: string[]): string[] {
  return canaries.flatMap((c) => [c, Buffer.from(c).toString('base64')]);
}

export async function judgeSecrets(texts: AsyncIterable<Text>, canaries: string[]): Promise<Outcome> {
  const forms = canaryForms(canaries);
  const violations: string[] = [];
  let checked = 0;
  for await (const t of texts) {
    checked++;
    if (forms.some((f) => t.text.includes(f))) violations.push(`${t.source}: contains a canary token`);
  }
  return { checked, unit: 'texts', violations };
}

async function* itemsOf(state: SoakState): AsyncIterable<Text> {
  for (const table of [state.table, state.idempotencyTable]) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await state.db.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      for (const item of page.Items ?? [])
        yield { source: `item ${table} ${item.pk ?? item.id} ${item.sk ?? ''}`, text: JSON.stringify(item) };
      start = page.LastEvaluatedKey;
    } while (start);
  }
}

async function* everything(state: SoakState): AsyncIterable<Text> {
  yield* state.texts();
  for (const dl of state.deadLetters)
    yield { source: `dead letter ${dl.functionId}`, text: JSON.stringify(dl) };
  yield* itemsOf(state);
}

export const deadLettersExplained: Invariant = {
  name: 'every dead letter explained',
  check: async (state) => {
    const r = judgeDeadLetters(state.deadLetters, state.poisoned);
    const causes = Object.entries(r.causes).map(([k, n]) => `${k} ${n}`);
    return { ...r, unit: causes.length ? `dead letters (${causes.join(', ')})` : 'dead letters' };
  },
};

export const noSecrets: Invariant = {
  name: 'no secret material anywhere',
  check: (state) => judgeSecrets(everything(state), state.canaries),
};
