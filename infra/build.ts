import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readStackConfig } from './config.js';
import { FleetscopeStack } from './stack.js';

/**
 * Adds the fleetscope stack to an app, configured from the app's context, with cdk-nag's AwsSolutions
 * pack as a synthesis-time validation (any unacknowledged finding fails `synth`). infra/app.ts and the
 * tests both build the app through this, so the tests check what `cdk synth` deploys.
 */
export function buildFleetscope(app: App): FleetscopeStack {
  const config = readStackConfig(app.node);
  const stack = new FleetscopeStack(app, config.stackName, { stackName: config.stackName, config });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
