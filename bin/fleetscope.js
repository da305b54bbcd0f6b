#!/usr/bin/env node
// `npx fleetscope ...`: runs the TypeScript CLI on the project's Node 24 through tsx.
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  console.error(
    `fleetscope needs Node 24; this is Node ${process.versions.node}. Run it through npx from the project (npx puts node_modules/.bin first on PATH) after npm ci.`,
  );
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../cli/main.ts');
process.exit(await main(process.argv.slice(2)));
