/**
 * At a release: writes the stateful resources of the template this tree synthesizes with the default
 * context to test/infra/fixtures/release-<version>.stateful.json, the snapshot the next release's
 * upgrade test (upgrade.test.ts) compares against. `npx tsx test/infra/snapshot-release.ts`.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildFleetscope } from '../../infra/build.js';
import { REPO_ROOT } from '../../infra/paths.js';
import { isStateful } from './stateful.js';
import type { Json } from './synth.js';

const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
const { context } = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Json };
const app = new App({
  outdir: mkdtempSync(join(tmpdir(), 'fleetscope-snapshot-')),
  context: { ...context, 'aws:cdk:bundling-stacks': [] },
});
const resources = Template.fromStack(buildFleetscope(app)).toJSON().Resources as Record<string, Json>;
const file = join(REPO_ROOT, 'test', 'infra', 'fixtures', `release-${version}.stateful.json`);
// A release's snapshot is what the next release is held to: written again from a later tree (before the
// version was bumped), the upgrade test would compare the tree with itself and pass over any replacement.
if (existsSync(file)) {
  console.error(`${file} exists: release ${version} was snapshotted already; bump the version first`);
  process.exit(1);
}
const snapshot = {
  Description: `The stateful resources of the template fleetscope ${version} synthesizes with the default context: what an upgrade must neither replace nor delete. Refresh at each release: npx tsx test/infra/snapshot-release.ts.`,
  Resources: Object.fromEntries(Object.entries(resources).filter(([, r]) => isStateful(r))),
};
writeFileSync(file, `${JSON.stringify(snapshot, null, 1)}\n`);
console.log(`wrote ${file}`);
