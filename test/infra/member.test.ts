/**
 * The member-account stack: the role trusts only the control plane's cluster-access function roles (and
 * the external ID), has no IAM permissions of its own, and each named cluster gets an access entry with
 * its access policies; cdk-nag AwsSolutions stays clean, and `cdk synth` of the member app works offline.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildMember } from '../../infra/member/build.js';
import { REPO_ROOT } from '../../infra/paths.js';

// biome-ignore lint/suspicious/noExplicitAny: synthesised CloudFormation is untyped JSON
type Json = Record<string, any>;

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'fleetscope-member-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function synth(context: Record<string, unknown> = {}) {
  const app = new App({ outdir: tempDir(), context });
  const stack = buildMember(app);
  const template = Template.fromStack(stack); // runs cdk-nag: unacknowledged findings throw
  return { stack, template, resources: template.toJSON().Resources as Record<string, Json> };
}
const partitionArn = (rest: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, rest]] });

describe('member-account stack', () => {
  it('trusts only the control plane function roles under its path, with the external ID, for an hour', () => {
    const { template, resources } = synth({
      'member.controlPlaneAccount': '111122223333',
      'member.controlPlaneStack': 'FleetscopeProd',
      'member.externalId': 'ext-7f3a91',
      'member.clusters': 'prod-eu-1',
    });
    const roles = Object.values(resources).filter((r) => r.Type === 'AWS::IAM::Role');
    expect(roles).toHaveLength(1);
    const role = roles[0]!.Properties;
    expect(role.RoleName).toBe('fleetscope-access');
    expect(role.MaxSessionDuration).toBe(3600);
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'sts:AssumeRole',
        Principal: { AWS: partitionArn(':iam::111122223333:root') },
        Condition: {
          ArnLike: {
            'aws:PrincipalArn': partitionArn(':iam::111122223333:role/fleetscope/FleetscopeProd/*'),
          },
          StringEquals: { 'sts:ExternalId': 'ext-7f3a91' },
        },
      },
    ]);
    // No identity policy: the EKS token needs none, the access entry is what grants.
    expect(role.Policies).toBeUndefined();
    expect(role.ManagedPolicyArns).toBeUndefined();
    template.resourceCountIs('AWS::IAM::Policy', 0);
    template.resourceCountIs('AWS::IAM::ManagedPolicy', 0);
  });

  it('gives each named cluster an access entry for the role in the RBAC group, with no access policy', () => {
    const { resources, template } = synth({ 'member.clusters': 'prod-eu-1,prod-eu-2' });
    const entries = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::EKS::AccessEntry');
    expect(entries.map(([, e]) => e.Properties.ClusterName)).toEqual(['prod-eu-1', 'prod-eu-2']);
    const roleId = Object.entries(resources).find(([, r]) => r.Type === 'AWS::IAM::Role')![0];
    for (const [, e] of entries)
      expect(e.Properties).toEqual({
        ClusterName: e.Properties.ClusterName,
        PrincipalArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
        Type: 'STANDARD',
        KubernetesGroups: ['fleetscope'],
      });
    // The one recipe: the RBAC the capabilities declare, bound to that group (test/rbac/member-recipe.real.test.ts).
    const outputs = template.toJSON().Outputs as Record<string, Json>;
    expect(outputs.KubernetesGroup!.Value).toBe('fleetscope');
    expect(outputs.RbacCommand!.Value).toBe('npx fleetscope rbac --group fleetscope | kubectl apply -f -');
    // Without a control plane account the role trusts this account's functions; no external ID condition.
    const trust = Object.values(resources).find((r) => r.Type === 'AWS::IAM::Role')!.Properties
      .AssumeRolePolicyDocument.Statement[0];
    expect(trust.Condition).toEqual({
      ArnLike: {
        'aws:PrincipalArn': {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':iam::',
              { Ref: 'AWS::AccountId' },
              ':role/fleetscope/Fleetscope/*',
            ],
          ],
        },
      },
    });
  });

  it('adds cluster-wide access policies only when the operator names them, and limits the RBAC to capabilities named', () => {
    const { resources, template } = synth({
      'member.clusters': 'prod-eu-1',
      'member.accessPolicies': 'AmazonEKSViewPolicy',
      'member.kubernetesGroups': 'fleet-ops',
      'member.capabilities': 'inventory,claims',
    });
    const [entry] = Object.values(resources).filter((r) => r.Type === 'AWS::EKS::AccessEntry');
    expect(entry!.Properties.KubernetesGroups).toEqual(['fleet-ops']);
    expect(entry!.Properties.AccessPolicies).toEqual([
      {
        PolicyArn: partitionArn(':eks::aws:cluster-access-policy/AmazonEKSViewPolicy'),
        AccessScope: { Type: 'cluster' },
      },
    ]);
    expect((template.toJSON().Outputs as Record<string, Json>).RbacCommand!.Value).toBe(
      'npx fleetscope rbac --group fleet-ops --capability inventory --capability claims | kubectl apply -f -',
    );
  });

  it('adds access entries only, to the existing role, in an account second region', () => {
    const { template, resources } = synth({ 'member.createRole': 'false', 'member.clusters': 'prod-us-1' });
    template.resourceCountIs('AWS::IAM::Role', 0);
    const [entry] = Object.values(resources).filter((r) => r.Type === 'AWS::EKS::AccessEntry');
    expect(entry!.Properties.PrincipalArn).toEqual({
      'Fn::Join': [
        '',
        ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':role/fleetscope-access'],
      ],
    });
  });

  it('refuses bad context values naming the key, and fails on an unacknowledged cdk-nag finding', () => {
    for (const context of [
      { 'member.controlPlaneAccount': '12345' },
      { 'member.roleName': 'a role' },
      { 'member.externalId': 'x' },
      { 'member.accessPolicies': 'AdministratorAccess' },
      { 'member.createRole': 'maybe' },
      { 'member.capabilities': 'inventory,telepathy' },
      { 'member.kubernetesGroups': 'a,b' },
      { 'member.kubernetesGroups': 'system:masters' },
    ]) {
      const key = Object.keys(context)[0]!;
      expect(() => buildMember(new App({ outdir: tempDir(), context })), key).toThrow(`context "${key}"`);
    }
    const app = new App({ outdir: tempDir() });
    const stack = buildMember(app);
    new sqs.Queue(stack, 'Unencrypted', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    expect(() => Template.fromStack(stack)).toThrow(/AwsSolutions-SQS2/);
  });

  it('synthesises with the CDK CLI offline, no credentials', () => {
    const outdir = tempDir();
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('AWS_') && !k.startsWith('CDK_')) env[k] = v;
    Object.assign(env, {
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SHARED_CREDENTIALS_FILE: join(outdir, 'none'),
      AWS_CONFIG_FILE: join(outdir, 'none'),
    });
    const run = spawnSync(
      'npx',
      [
        'cdk',
        'synth',
        '--app',
        'npx tsx infra/member/app.ts',
        '--quiet',
        '--no-notices',
        '-o',
        outdir,
        '-c',
        'member.clusters=a',
      ],
      { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 },
    );
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const file = join(outdir, 'FleetscopeMember.template.json');
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('AWS::EKS::AccessEntry');
  }, 130_000);
});
