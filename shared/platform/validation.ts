import type { z } from 'zod';

export class InputValidationError extends Error {
  override name = 'InputValidationError';
  constructor(
    readonly what: string,
    readonly issues: { path: string; message: string }[],
  ) {
    super(
      `invalid ${what}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`,
    );
  }
}

/** Parse with a zod schema; on failure throw an error that names each bad field by its path. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InputValidationError(
    what,
    result.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message })),
  );
}

export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}
