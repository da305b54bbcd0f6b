/**
 * The templates as CloudFormation's own linter judges them: cfn-lint (AWS's, from PyPI) over every
 * template the apps synthesize (the control plane with no VPC, with a VPC the stack creates behind
 * endpoints or a NAT, in an existing VPC, and the member account's), in one run. No error; every
 * warning is one of those listed below with why it stays. Without cfn-lint the suite skips with one
 * line, and fails under CI=true (.ci/run installs it).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { expect, it } from 'vitest';
import { buildFleetscope } from '../../infra/build.js';
import { buildMember } from '../../infra/member/build.js';
import { describeNeeding } from '../support/needs-tool.js';
import { newApp, tempDir } from './synth.js';

const TEMPLATES: Record<string, Record<string, string>> = {
  'no-vpc': {},
  'vpc-create-endpoints': { vpc: 'create' },
  'vpc-create-nat': { vpc: 'create', vpcEgress: 'nat' },
  'vpc-existing': {
    vpc: 'vpc-0a1b2c3d4e5f60718',
    vpcSubnetIds: 'subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f60722',
    vpcRouteTableIds: 'rtb-0a1b2c3d4e5f60733',
  },
};

/** The warnings that stay, by rule, with why. Anything else cfn-lint reports fails the test. */
const ACCEPTED_WARNINGS: Record<string, string> = {
  W3005:
    "Each function's DependsOn its role, beside the GetAtt of the role's ARN: CDK adds it so that the " +
    "role's policies exist before Lambda first assumes the role; redundant for ordering, harmless.",
};

interface Match {
  Rule: { Id: string };
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Filename: string;
}

const version = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
const missing = version.status === 0 ? undefined : 'cfn-lint is not on PATH';

describeNeeding(
  { tool: 'cfn-lint', missing, enable: 'pip install cfn-lint (.ci/run installs it)' },
  'cfn-lint over every synthesized template',
  () => {
    it('finds no error, and only the warnings listed with their reasons', () => {
      const dir = tempDir('fleetscope-cfn-lint-');
      const files: string[] = [];
      const write = (name: string, template: unknown) => {
        const file = join(dir, `${name}.template.json`);
        writeFileSync(file, JSON.stringify(template));
        files.push(file);
      };
      for (const [name, context] of Object.entries(TEMPLATES))
        write(name, Template.fromStack(buildFleetscope(newApp(context))).toJSON());
      const member = new App({
        outdir: tempDir('fleetscope-member-'),
        context: { 'member.clusters': 'a,b' },
      });
      write('member', Template.fromStack(buildMember(member)).toJSON());

      const run = spawnSync('cfn-lint', ['--format', 'json', '--', ...files], {
        encoding: 'utf8',
        timeout: 170_000,
        maxBuffer: 64 << 20,
      });
      // Exit codes are a bit mask of what was found (2 errors, 4 warnings, 8 informational); 1 is a crash.
      expect(run.status === 1 || run.status === null, run.stderr).toBe(false);
      const matches = JSON.parse(run.stdout || '[]') as Match[];
      const shown = (m: Match) => `${m.Filename.split('/').at(-1)}: ${m.Rule.Id} ${m.Message}`;
      expect(matches.filter((m) => m.Level === 'Error').map(shown)).toEqual([]);
      expect(
        matches.filter((m) => m.Level === 'Warning' && !ACCEPTED_WARNINGS[m.Rule.Id]).map(shown),
      ).toEqual([]);
      const counts = new Map<string, number>();
      for (const m of matches) counts.set(m.Rule.Id, (counts.get(m.Rule.Id) ?? 0) + 1);
      console.log(
        `cfn-lint ${version.stdout.trim()} over ${files.length} templates: 0 errors; ` +
          ([...counts]
            .map(([id, n]) => `${id} x${n} (accepted: ${ACCEPTED_WARNINGS[id] ?? 'informational'})`)
            .join('; ') || 'no warnings'),
      );
    }, 180_000);
  },
);
