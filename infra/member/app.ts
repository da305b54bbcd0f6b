/**
 * The member-account CDK app: `npx cdk deploy --app "npx tsx infra/member/app.ts" -c member.clusters=a,b`
 * in each account (and region) of the fleet. Environment-agnostic like the control plane's: `cdk synth`
 * runs offline with no credentials. Settings: infra/member/config.ts.
 */
import { App } from 'aws-cdk-lib';
import { buildMember } from './build.js';

const app = new App();
try {
  buildMember(app);
  app.synth();
} catch (err) {
  console.error(`fleetscope member: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
