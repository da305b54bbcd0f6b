/**
 * Property: every function's input (each event detail-type its rules route to it, each schedule's
 * payload), broken at any field (deleted, or replaced by any JSON value), is either still valid or
 * refused with an error naming that field, and then nothing is written to either table.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { allFunctions, allRules, allSchedules } from '../../shared/capabilities.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { eventFiles } from '../../shared/platform/event-files.js';
import { type DetailType, eventsSchema } from '../../shared/platform/events.js';
import { InputValidationError } from '../../shared/platform/validation.js';
import { apply, fingerprint, junk, mutationOf, pathText } from './helpers.js';

let runtime: LocalRuntime;
const files = eventFiles(allSchedules());

beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
  // A registered cluster named as in the samples, so an event that slipped through would find work.
  await new DynamoRegistry(runtime.db, runtime.table).add({
    name: 'prod-eu-1',
    kubeconfig: { kind: 'file', path: '/nonexistent', context: 'prod-eu-1' },
    labels: {},
    registeredAt: '2026-11-21T10:00:00Z',
  });
});
afterAll(() => runtime?.stop());

/** Each function with the valid inputs it takes, from the catalogue. */
function inputsOf(functionId: string): { valid: unknown; accepts: (v: unknown) => boolean }[] {
  const detailTypes = [
    ...new Set(
      allRules()
        .filter((r) => r.target === functionId)
        .flatMap((r) => r.pattern['detail-type']),
    ),
  ];
  const out: { valid: unknown; accepts: (v: unknown) => boolean }[] = [];
  if (detailTypes.length > 0) {
    const schema = eventsSchema(detailTypes as DetailType[]);
    for (const t of detailTypes)
      out.push({ valid: files[`samples/${t}.json`], accepts: (v) => schema.safeParse(v).success });
  }
  return out;
}

describe('fuzzed event handler inputs', () => {
  for (const fn of allFunctions()) {
    const inputs = inputsOf(fn.id);
    if (inputs.length === 0) continue;
    it(`${fn.id}: a malformed event is refused naming the field, with no write`, async () => {
      const tables = [runtime.table, runtime.idempotencyTable];
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...inputs).chain((i) => mutationOf(i.valid).map((m) => ({ i, m }))),
          async ({ i, m }) => {
            const event = apply(i.valid, m);
            fc.pre(!i.accepts(event)); // still a valid event: not this property's business
            const before = await fingerprint(runtime.db, tables);
            const err = await runtime.invoker.invoke(fn.id, event).then(
              () => undefined,
              (e: unknown) => e,
            );
            expect(err).toBeInstanceOf(InputValidationError);
            const named = (err as InputValidationError).issues.map((x) => x.path);
            // The field broken, or (for a field deleted from its parent) the place it was missing from.
            expect(
              named.some((p) => p && (pathText(m.path).startsWith(p) || p.startsWith(pathText(m.path)))),
            ).toBe(true);
            expect(await fingerprint(runtime.db, tables)).toBe(before);
          },
        ),
        { numRuns: 40, seed: 4943 },
      );
    });
  }

  it('scheduled functions: a payload with a field broken or added is refused naming it, with no write', async () => {
    const tables = [runtime.table, runtime.idempotencyTable];
    const schedules = allSchedules();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...schedules),
        fc.constantFrom('capability', 'task', 'extra'),
        junk,
        async (s, key, value) => {
          const payload = { ...s.input, [key]: value };
          fc.pre(JSON.stringify(payload) !== JSON.stringify(s.input));
          const before = await fingerprint(runtime.db, tables);
          const err = await runtime.invoker.invoke(s.target, payload).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err).toBeInstanceOf(InputValidationError);
          expect((err as Error).message).toContain(key in s.input ? `${key}:` : `"${key}"`);
          expect(await fingerprint(runtime.db, tables)).toBe(before);
        },
      ),
      { numRuns: 30, seed: 2149 },
    );
  });
});
