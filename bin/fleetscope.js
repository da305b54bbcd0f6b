#!/usr/bin/env node
// Runs the CLI's bundle (dist/, built by scripts/build-cli.mjs) on the project's Node 24, rebuilding it
// first when it is missing or older than the sources. bin/fleetscope (what `npm link` puts on PATH, and
// what `npx fleetscope` runs) starts it on that Node.
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  console.error(
    `fleetscope needs Node 24; this is Node ${process.versions.node}. Run it as fleetscope (after npm link) or ./bin/fleetscope from the checkout, after npm ci: both use the project's Node 24.`,
  );
  process.exit(1);
}
// V8's code cache on disk: compiling the bundle's chunks was most of a start that opens the local state.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();
const builder = await import('../scripts/build-cli.mjs');
if (builder.isStale()) await builder.build();
const { main } = await import('../dist/cli/main.js');
process.exit(await main(process.argv.slice(2)));
