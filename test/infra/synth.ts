/**
 * Synthesis for the stack's suites: in memory with bundling skipped (fast), with cdk.json's context
 * (feature flags and defaults) so the template is the one `cdk synth` produces; Template.fromStack runs
 * the cdk-nag validation, so an unacknowledged finding throws.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll } from 'vitest';
import { buildFleetscope } from '../../infra/build.js';
import { REPO_ROOT } from '../../infra/paths.js';

// biome-ignore lint/suspicious/noExplicitAny: synthesised CloudFormation is untyped JSON
export type Json = Record<string, any>;
export type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Sid?: string };

export const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};

const outdirs: string[] = [];
/** A temporary directory, removed after the suite. */
export const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  outdirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of outdirs) rmSync(d, { recursive: true, force: true });
});

export function newApp(context: Record<string, unknown> = {}): App {
  return new App({
    outdir: tempDir('fleetscope-cdk-test-'),
    context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context },
  });
}

export function synth(context: Record<string, unknown> = {}) {
  const app = newApp(context);
  const stack = buildFleetscope(app);
  const template = Template.fromStack(stack);
  return { app, stack, template, resources: template.toJSON().Resources as Record<string, Json> };
}

export const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
export const ofType = (resources: Record<string, Json>, type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

/** Every statement of every identity policy that applies to a role (inline in the role, or attached). */
export function roleStatements(resources: Record<string, Json>, roleId: string): Statement[] {
  const role = resources[roleId]!;
  const inline = (role.Properties.Policies ?? []).flatMap((p: Json) => p.PolicyDocument.Statement);
  const attached = ofType(resources, 'AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: Json) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
  return [...inline, ...attached];
}
