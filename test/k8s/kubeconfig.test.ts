import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KubeconfigError } from '../../shared/k8s/errors.js';
import { buildKubeConfig } from '../../shared/k8s/kubeconfig.js';
import type { AssumeRoleSpec } from '../../shared/k8s/role.js';
import type { EksTokenProvider } from '../../shared/k8s/token-source.js';
import { testDir } from '../support/temp.js';
import { FAKE_CA_B64, kubeconfigYaml, simpleKubeconfig } from './helpers.js';

const build = (text: string, extra: Partial<Parameters<typeof buildKubeConfig>[1]> = {}) =>
  buildKubeConfig(text, { cluster: 'fleet-a', env: {}, ...extra });

function problem(text: string, extra: Partial<Parameters<typeof buildKubeConfig>[1]> = {}): KubeconfigError {
  try {
    build(text, extra);
  } catch (e) {
    expect(e).toBeInstanceOf(KubeconfigError);
    return e as KubeconfigError;
  }
  throw new Error('expected a KubeconfigError');
}

const twoContexts = kubeconfigYaml({
  clusters: [
    { name: 'east', server: 'https://east:6443', caData: FAKE_CA_B64 },
    { name: 'west', server: 'https://west:6443', caData: FAKE_CA_B64 },
  ],
  users: [{ name: 'admin', user: { token: 'tok-1234567' } }],
  contexts: [
    { name: 'east', cluster: 'east', user: 'admin' },
    { name: 'west', cluster: 'west', user: 'admin', namespace: 'ops' },
  ],
});

class FakeEks implements EksTokenProvider {
  calls: Array<[string, string]> = [];
  roles: Array<AssumeRoleSpec | undefined> = [];
  async token(cluster: string, region: string, role?: AssumeRoleSpec) {
    this.calls.push([cluster, region]);
    this.roles.push(role);
    return `k8s-aws-v1.fake-${cluster}-${region}`;
  }
  invalidate() {}
  regionProblem(region: string) {
    return region === 'eu-nowhere-1' ? `region "${region}" does not exist` : null;
  }
}

async function authHeader(kc: ReturnType<typeof build>['kubeConfig']): Promise<string | undefined> {
  const opts: { headers?: Record<string, string> } = {};
  await kc.applyToHTTPSOptions(opts as never);
  return opts.headers?.Authorization;
}

describe('buildKubeConfig', () => {
  it('builds a KubeConfig holding only the selected context', async () => {
    const { kubeConfig, info } = build(twoContexts, { context: 'west' });
    expect(kubeConfig.getContexts().map((c) => c.name)).toEqual(['west']);
    expect(kubeConfig.getClusters().map((c) => c.name)).toEqual(['west']);
    expect(kubeConfig.getCurrentCluster()?.skipTLSVerify).toBe(false);
    expect(info).toMatchObject({
      context: 'west',
      server: 'https://west:6443',
      namespace: 'ops',
      auth: { kind: 'token' },
    });
    expect(await authHeader(kubeConfig)).toBe('Bearer tok-1234567');
  });

  it('names the available contexts when the wanted one is unknown', () => {
    const e = problem(twoContexts, { context: 'north' });
    expect(e.message).toBe(
      'cluster "fleet-a": load kubeconfig failed: context "north" is not in the kubeconfig; available contexts: "east", "west"',
    );
    expect(problem(twoContexts).message).toContain('several contexts and no current-context');
  });

  it('reports invalid YAML by position only, without quoting the content', () => {
    const text = 'users:\n- name: u\n  user:\n    token: "SECRET-VALUE-XYZ\n  bad: [\n';
    const e = problem(text);
    expect(e.message).toMatch(/not valid YAML \([A-Z_]+ at line \d+, column \d+\)/);
    expect(e.message).not.toContain('SECRET-VALUE-XYZ');
    expect(problem('').message).toContain('empty');
    expect(problem('- just\n- a list\n').message).toContain('must be a YAML mapping');
  });

  it('refuses insecure-skip-tls-verify', () => {
    const e = problem(simpleKubeconfig({ clusterExtra: { 'insecure-skip-tls-verify': true } }));
    expect(e.message).toContain('insecure-skip-tls-verify: true');
    expect(e.message).toContain('TLS verification on');
  });

  it('refuses to run with NODE_TLS_REJECT_UNAUTHORIZED=0', () => {
    expect(problem(simpleKubeconfig({}), { env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } }).message).toContain(
      'NODE_TLS_REJECT_UNAUTHORIZED',
    );
  });

  it('names missing pieces', () => {
    expect(problem(simpleKubeconfig({ server: '' })).message).toContain('cluster "c1" has no server');
    expect(problem(simpleKubeconfig({ server: 'http://x:8080' })).message).toContain(
      'must be an https:// URL',
    );
    expect(problem(simpleKubeconfig({ server: 'https://u:p@x' })).message).toContain(
      'credentials in its server URL',
    );
    expect(problem(simpleKubeconfig({ caData: 'bm90IGEgY2VydA==' })).message).toContain(
      'certificate-authority-data of cluster "c1" is not base64-encoded PEM',
    );
    expect(problem(simpleKubeconfig({ user: {} })).message).toContain('user "c1-user" has no credentials');
    const dangling = kubeconfigYaml({
      clusters: [{ name: 'a', server: 'https://a', caData: FAKE_CA_B64 }],
      users: [{ name: 'u', user: { token: 't-1234567' } }],
      contexts: [{ name: 'ctx', cluster: 'b', user: 'u' }],
    });
    expect(problem(dangling).message).toContain(
      'refers to cluster "b", which the kubeconfig does not define (clusters: "a")',
    );
    const noUser = kubeconfigYaml({
      clusters: [{ name: 'a', server: 'https://a', caData: FAKE_CA_B64 }],
      users: [],
      contexts: [{ name: 'ctx', cluster: 'a', user: 'ghost' }],
    });
    expect(problem(noUser).message).toContain('refers to user "ghost"');
  });

  it('refuses a fake client key without quoting it', () => {
    const canary = 'CANARY-key-7f3a9';
    const e = problem(
      simpleKubeconfig({
        user: { 'client-certificate-data': FAKE_CA_B64, 'client-key-data': canary },
      }),
    );
    expect(e.message).toContain('client-key-data of user "c1-user" is not base64-encoded PEM');
    expect(e.message).not.toContain(canary);
  });

  it('refuses exec plugins that are not EKS, and auth-providers', () => {
    const gke = problem(
      simpleKubeconfig({
        user: {
          exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'gke-gcloud-auth-plugin' },
        },
      }),
    );
    expect(gke.message).toContain('exec plugin "gke-gcloud-auth-plugin", which cannot work in Lambda');
    expect(problem(simpleKubeconfig({ user: { 'auth-provider': { name: 'oidc' } } })).message).toContain(
      'auth-provider',
    );
    const role = problem(
      simpleKubeconfig({
        user: {
          exec: {
            command: 'aws',
            args: ['eks', 'get-token', '--cluster-name', 'x', '--region', 'us-east-1', '--role-arn', 'arn:r'],
          },
        },
      }),
      { eksTokens: new FakeEks() },
    );
    expect(role.message).toContain(
      'runs aws eks get-token with an unusable role: role ARN "arn:r" is not an IAM role ARN',
    );
  });

  it('mints with the role the plugin names (--role-arn, -r and --external-id), or the registration sets', async () => {
    const roleArn = 'arn:aws:iam::222233334444:role/fleetscope-access';
    const eks = new FakeEks();
    const aws = simpleKubeconfig({
      user: {
        exec: {
          command: 'aws',
          args: ['--region', 'eu-west-1', 'eks', 'get-token', '--cluster-name', 'x', '--role-arn', roleArn],
        },
      },
    });
    const built = build(aws, { eksTokens: eks });
    expect(built.info.auth).toMatchObject({ kind: 'eks', eks: { role: { roleArn } } });
    await authHeader(built.kubeConfig);
    expect(eks.roles).toEqual([{ roleArn }]);

    const authenticator = simpleKubeconfig({
      user: {
        exec: {
          command: 'aws-iam-authenticator',
          args: ['token', '-i', 'x', '--region', 'eu-west-1', '-r', roleArn, '--external-id', 'ext-1234567'],
        },
      },
    });
    expect(build(authenticator, { eksTokens: eks }).info.auth).toMatchObject({
      eks: { role: { roleArn, externalId: 'ext-1234567' } },
    });
    // The registration's role wins over the plugin's.
    const other = { roleArn: 'arn:aws:iam::555566667777:role/fleetscope-ops', externalId: 'reg-9876543' };
    expect(build(aws, { eksTokens: eks, assumeRole: other }).info.auth).toMatchObject({
      eks: { role: other },
    });
    // A role cannot apply to a static token.
    expect(
      problem(simpleKubeconfig({ user: { token: 'static-token-1' } }), { assumeRole: other }).message,
    ).toContain('a role to assume is set for this cluster, but user "c1-user" authenticates with a token');
  });

  it('refuses a region its token source cannot mint for, naming it', () => {
    const text = simpleKubeconfig({
      user: {
        exec: {
          command: 'aws',
          args: ['--region', 'eu-nowhere-1', 'eks', 'get-token', '--cluster-name', 'x'],
        },
      },
    });
    expect(problem(text, { eksTokens: new FakeEks() }).message).toContain(
      'region "eu-nowhere-1" does not exist',
    );
  });

  it('replaces "aws eks get-token" with an in-process token', async () => {
    const eks = new FakeEks();
    const text = simpleKubeconfig({
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1beta1',
          command: 'aws',
          args: [
            '--region',
            'eu-central-1',
            'eks',
            'get-token',
            '--cluster-name',
            'prod',
            '--output',
            'json',
          ],
          env: [{ name: 'AWS_PROFILE', value: 'ops' }],
        },
      },
    });
    const { kubeConfig, info } = build(text, { eksTokens: eks });
    expect(info.auth).toEqual({
      kind: 'eks',
      eks: { plugin: 'aws eks get-token', clusterName: 'prod', region: 'eu-central-1' },
    });
    expect(kubeConfig.getCurrentUser()?.exec).toBeFalsy();
    expect(await authHeader(kubeConfig)).toBe('Bearer k8s-aws-v1.fake-prod-eu-central-1');
    expect(await authHeader(kubeConfig)).toBe('Bearer k8s-aws-v1.fake-prod-eu-central-1');
    expect(eks.calls).toHaveLength(2);
  });

  it('replaces aws-iam-authenticator, taking the region from the EKS server name', async () => {
    const eks = new FakeEks();
    const text = simpleKubeconfig({
      server: 'https://ABCDEF0123456789.gr7.ap-southeast-2.eks.amazonaws.com',
      user: { exec: { command: '/usr/local/bin/aws-iam-authenticator', args: ['token', '-i', 'syd'] } },
    });
    const { kubeConfig, info } = build(text, { eksTokens: eks });
    expect(info.auth).toMatchObject({ kind: 'eks', eks: { clusterName: 'syd', region: 'ap-southeast-2' } });
    expect(await authHeader(kubeConfig)).toBe('Bearer k8s-aws-v1.fake-syd-ap-southeast-2');
    const noRegion = simpleKubeconfig({
      user: { exec: { command: 'aws-iam-authenticator', args: ['token', '-i', 'x'] } },
    });
    expect(problem(noRegion, { eksTokens: eks }).message).toContain('no region could be inferred');
    expect(build(noRegion, { eksTokens: eks, env: { AWS_REGION: 'us-east-2' } }).info.auth).toMatchObject({
      eks: { region: 'us-east-2' },
    });
  });

  it('resolves token files against the kubeconfig directory', async () => {
    const dir = testDir('kc-');
    writeFileSync(path.join(dir, 'tok'), 'file-token-abcdef\n');
    const { kubeConfig } = build(simpleKubeconfig({ user: { 'token-file': 'tok' } }), { baseDir: dir });
    expect(await authHeader(kubeConfig)).toBe('Bearer file-token-abcdef');
    expect(
      problem(simpleKubeconfig({ user: { 'token-file': 'missing' } }), { baseDir: dir }).message,
    ).toContain('names a file that does not exist');
  });
});
