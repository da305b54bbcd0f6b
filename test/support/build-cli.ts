/** vitest global setup: builds the CLI's bundle when stale, once, before test files run it in parallel. */
export default async function setup(): Promise<void> {
  // @ts-expect-error: a plain .mjs script without type declarations
  const builder = await import('../../scripts/build-cli.mjs');
  if (builder.isStale()) await builder.build();
}
