/** A setting from the environment: a non-negative number, or undefined when unset; anything else throws. */
export function envNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number (got "${v}")`);
  return n;
}
