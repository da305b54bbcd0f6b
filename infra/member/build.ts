import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readMemberConfig } from './config.js';
import { FleetscopeMemberStack } from './stack.js';

/** The member-account stack with cdk-nag's AwsSolutions pack (unacknowledged findings fail synth). */
export function buildMember(app: App): FleetscopeMemberStack {
  const config = readMemberConfig(app.node);
  const stack = new FleetscopeMemberStack(app, config.stackName, { stackName: config.stackName, config });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
