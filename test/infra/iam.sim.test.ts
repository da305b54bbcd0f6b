/**
 * IAM proven offline against the calls the code makes. The real handlers run through the local runtime
 * (dynalite, the local bus, a simulated cluster) with the AWS stand-ins of this file (Secrets Manager,
 * S3, STS), every schedule and every rule's event once, while an SDK middleware (aws-calls.ts) records
 * each AWS call by the function that made it. Each recorded call is then evaluated against that
 * function's policies in the synthesized template by @cloud-copilot/iam-simulate: every one allowed;
 * calls no function may make (other tables, other secrets, deleting tables or queues, IAM writes)
 * denied; each granted action no call used reported. The figures are printed.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_ENDPOINTS } from '../../infra/constructs/network.js';
import { buildMember } from '../../infra/member/build.js';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { allFunctions } from '../../shared/capabilities.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { DEFAULTS, ENV } from '../../shared/platform/config.js';
import { simpleKubeconfig } from '../k8s/helpers.js';
import { type LocalSts, startLocalSts } from '../support/sts-server.js';
import { ACCOUNT, type AwsCall, during, install, recorded } from './aws-calls.js';
import { decide, type FunctionPolicies, functionPolicies, grantedActions, resolve } from './iam-eval.js';
import { type Json, synth, tempDir } from './synth.js';

/** The member account role's trust policy, as infra/member deploys it for this control plane. */
function memberTrustPolicy(): Json {
  const app = new App({
    outdir: tempDir('fleetscope-member-'),
    context: { 'member.controlPlaneAccount': ACCOUNT },
  });
  const resources = Template.fromStack(buildMember(app)).toJSON().Resources as Record<string, Json>;
  const role = Object.values(resources).find((r) => r.Type === 'AWS::IAM::Role')!;
  return resolve(resources, role.Properties.AssumeRolePolicyDocument) as Json;
}

const SECRET_KEY = 'iamTestSecretKey/0123456789abcdefGHIJKLmn';
const MEMBER_ROLE = 'arn:aws:iam::222233334444:role/fleetscope-access';
const BUCKET = 'fleetscope-test-reports';
const ENV_KEYS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_ENDPOINT_URL_STS',
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'AWS_ENDPOINT_URL_S3',
  ENV.reportBucket,
  ENV.reportDir,
] as const;

/**
 * Grants Lambda uses with the function's role, never its code: its logs, its on-failure destination
 * (an SQS queue) and, in a VPC, its ENIs. Not counted as unused.
 */
const USED_BY_LAMBDA = new Set([
  'logs:CreateLogStream',
  'logs:PutLogEvents',
  'sqs:SendMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
]);

/** Secrets Manager (GetSecretValue) and S3 (PutObject) as far as the handlers use them. */
async function startAwsStandIns(secrets: Map<string, string>) {
  const puts: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      if (target === 'secretsmanager.GetSecretValue') {
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        const value = secrets.get(SecretId);
        res.setHeader('content-type', 'application/x-amz-json-1.1');
        if (value === undefined) {
          res.statusCode = 400;
          res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: 'no such secret' }));
          return;
        }
        res.end(
          JSON.stringify({
            ARN: `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:${SecretId}-AbCdEf`,
            Name: SecretId,
            SecretString: value,
            VersionId: 'v1',
          }),
        );
      } else if (req.method === 'PUT') {
        puts.push(String(req.url));
        res.setHeader('etag', '"1"');
        res.end();
      } else {
        res.statusCode = 400;
        res.end(`not served here: ${req.method} ${req.url} ${target}`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { endpoint, puts, stop: () => new Promise<void>((r) => server.close(() => r())) };
}

/** What no function may ever be allowed, whatever it is granted. */
function forbidden(f: FunctionPolicies): Pick<AwsCall, 'action' | 'resource' | 'context'>[] {
  const at = (service: string, rest: string) => `arn:aws:${service}:us-east-1:${ACCOUNT}:${rest}`;
  const table = at('dynamodb', `table/${f.env[ENV.table]}`);
  const probe = (action: string, resource: string) => ({ action, resource, context: {} });
  return [
    probe('dynamodb:GetItem', at('dynamodb', 'table/someone-elses-table')),
    probe('dynamodb:PutItem', at('dynamodb', 'table/someone-elses-table')),
    probe('dynamodb:DeleteTable', table),
    probe('dynamodb:UpdateTable', table),
    probe('dynamodb:DeleteTable', at('dynamodb', `table/${f.env[ENV.idempotencyTable]}`)),
    probe('dynamodb:RestoreTableFromBackup', table),
    probe('secretsmanager:GetSecretValue', at('secretsmanager', 'secret:prod/database-AbCdEf')),
    probe('secretsmanager:GetSecretValue', at('secretsmanager', 'secret:fleetscope/clustersX-AbCdEf')),
    probe('secretsmanager:PutSecretValue', at('secretsmanager', `secret:${DEFAULTS.secretPrefix}a-AbCdEf`)),
    probe('secretsmanager:DeleteSecret', at('secretsmanager', `secret:${DEFAULTS.secretPrefix}a-AbCdEf`)),
    probe('sqs:DeleteQueue', at('sqs', 'fleetscope-dlq')),
    probe('sqs:PurgeQueue', at('sqs', 'fleetscope-dlq')),
    probe('sqs:ReceiveMessage', at('sqs', 'fleetscope-dlq')),
    probe('events:PutEvents', at('events', 'event-bus/default')),
    probe('events:DeleteEventBus', at('events', `event-bus/${DEFAULTS.bus}`)),
    probe('events:PutRule', at('events', `rule/${DEFAULTS.bus}/x`)),
    probe('s3:GetObject', `arn:aws:s3:::${f.env[ENV.reportBucket] ?? BUCKET}/reports/latest.html`),
    probe('s3:DeleteObject', `arn:aws:s3:::${f.env[ENV.reportBucket] ?? BUCKET}/reports/latest.html`),
    probe('s3:PutObject', `arn:aws:s3:::${f.env[ENV.reportBucket] ?? BUCKET}/other.html`),
    probe('iam:CreateRole', `arn:aws:iam::${ACCOUNT}:role/x`),
    probe('iam:PutRolePolicy', f.roleArn),
    probe('iam:AttachRolePolicy', f.roleArn),
    probe('iam:PassRole', f.roleArn),
    probe('sts:AssumeRole', 'arn:aws:iam::222233334444:role/OrganizationAccountAccessRole'),
    probe('lambda:UpdateFunctionCode', at('lambda', 'function:x')),
    // Only the functions that reach clusters may assume the member role (the others have no grant).
    ...(f.env[ENV.secretPrefix] && !grantedActions(f).has('sts:AssumeRole')
      ? [probe('sts:AssumeRole', MEMBER_ROLE)]
      : []),
  ];
}

/**
 * Actions code calls on paths one pass over a fresh cluster does not reach, each with the path: they
 * stay granted, and the figures list them as unused.
 */
const NOT_REACHED_HERE = new Map([
  [
    'dynamodb:BatchWriteItem',
    'node scope deletes expired chunks in batches (shared/nodescope/store-dynamo.ts)',
  ],
]);

describe('IAM: every call the handlers make, judged against the template', () => {
  let sim: Simulator;
  let sts: LocalSts;
  let aws: Awaited<ReturnType<typeof startAwsStandIns>>;
  let runtime: LocalRuntime;
  let dir: string;
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  const byFunction = new Map<string, FunctionPolicies>();
  let trust: Json;
  /** A call as IAM decides it: cross-account AssumeRole needs the member role's trust too. */
  const judge = (f: FunctionPolicies, c: Pick<AwsCall, 'action' | 'resource' | 'context'>) =>
    decide(f, c, c.action === 'sts:AssumeRole' && c.resource === MEMBER_ROLE ? trust : undefined);

  beforeAll(async () => {
    trust = memberTrustPolicy();
    const { stack, resources } = synth();
    for (const f of stack.functions.all)
      byFunction.set(
        f.spec.id,
        functionPolicies(resources, stack.getLogicalId(f.fn.node.defaultChild as never), f.spec.id),
      );

    dir = await mkdtemp(join(tmpdir(), 'fleetscope-iam-'));
    sim = await startSimulator({ clusters: [{ name: 'plain', nodes: 2 }] });
    const plain = sim.cluster('plain');
    const secrets = new Map([
      [`${DEFAULTS.secretPrefix}plain`, sim.kubeconfig()],
      [
        `${DEFAULTS.secretPrefix}remote`,
        simpleKubeconfig({
          name: 'remote',
          server: plain.server,
          caData: Buffer.from(plain.caData).toString('base64'),
          user: {
            exec: {
              command: 'aws',
              args: [
                '--region',
                'us-east-1',
                'eks',
                'get-token',
                '--cluster-name',
                'remote',
                '--role-arn',
                MEMBER_ROLE,
              ],
            },
          },
        }),
      ],
    ]);
    aws = await startAwsStandIns(secrets);
    sts = await startLocalSts(SECRET_KEY);
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIAIAMTEST000000001',
      AWS_SECRET_ACCESS_KEY: SECRET_KEY,
      AWS_ENDPOINT_URL_STS: sts.endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.endpoint,
      AWS_ENDPOINT_URL_S3: aws.endpoint,
      [ENV.reportBucket]: BUCKET,
    });
    delete process.env[ENV.reportDir];
    runtime = await startLocalRuntime({ retryDelayMs: 5 });
    install();
    const invoke = runtime.invoker.invoke.bind(runtime.invoker);
    runtime.invoker.invoke = (id, event) => during(id, () => invoke(id, event));

    const registry = new DynamoRegistry(runtime.db, runtime.table);
    for (const name of ['plain', 'remote'])
      await registry.add({
        name,
        kubeconfig: { kind: 'secret', secretId: `${DEFAULTS.secretPrefix}${name}`, context: name },
        labels: {},
        registeredAt: new Date().toISOString(),
      });
    // Registration's check, each rule's events, then every schedule once (dispatch fans out on the bus).
    await runtime.invoker.invoke('verify', {
      name: 'plain',
      kubeconfig: { kind: 'secret', secretId: `${DEFAULTS.secretPrefix}plain`, context: 'plain' },
    });
    for (const name of ['plain', 'remote'])
      await runtime.bus.deliver({
        detailType: 'ClusterRegistered',
        detail: { cluster: name, labels: {}, registeredAt: new Date().toISOString() },
      });
    await runtime.bus.drain();
    const node = sim.cluster('plain').store.list('nodes')[0]!.metadata.name;
    const at = new Date().toISOString();
    await runtime.bus.deliver({
      detailType: 'NodeResizeRequested',
      detail: { cluster: 'plain', node, cpu: '2', memory: '4Gi', requestedAt: at },
    });
    await runtime.bus.drain();
    await runtime.scheduler.runOnce();
    await runtime.bus.drain();
    // In Lambda each function has its own container and reads the kubeconfig itself; here one process
    // caches it for all. With nothing else running, a cold cache lets balloons' request read it too.
    await resetClusterConnector();
    await runtime.bus.deliver({
      detailType: 'NodeResizeRequested',
      detail: { cluster: 'plain', node, cpu: '2', memory: '4Gi', requestedAt: new Date().toISOString() },
    });
    await runtime.bus.drain();
  }, 180_000);

  afterAll(async () => {
    await resetClusterConnector();
    await runtime?.stop();
    await sim?.stop();
    await sts?.stop();
    await aws?.stop();
    for (const k of ENV_KEYS)
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('allows every recorded call, and every service called has a VPC endpoint', async () => {
    const calls = recorded();
    expect(calls.length).toBeGreaterThan(0);
    const lines: string[] = [];
    for (const f of allFunctions()) {
      const policies = byFunction.get(f.id)!;
      const mine = calls.filter((c) => c.functionId === f.id);
      const distinct = [...new Map(mine.map((c) => [`${c.action} ${c.resource}`, c])).values()];
      for (const c of distinct) {
        const decision = await judge(policies, c);
        expect(decision, `${f.id}: ${c.action} on ${c.resource}`).toBe('Allowed');
        expect(Object.keys(SERVICE_ENDPOINTS), `${f.id} calls ${c.service}`).toContain(c.service);
      }
      const granted = grantedActions(policies);
      const used = new Set(distinct.map((c) => c.action));
      const unused = [...granted.keys()].filter((a) => !used.has(a) && !USED_BY_LAMBDA.has(a)).sort();
      lines.push(
        `${f.id.padEnd(19)} ${String(mine.length).padStart(5)} calls  ${String(distinct.length).padStart(3)} distinct, allowed  unused grants: ${unused.join(' ') || '-'}`,
      );
    }
    console.log(
      `IAM evaluation (recorded calls per function against the synthesized template):\n${lines.join('\n')}`,
    );
  });

  it('covers every function and every service it is granted, through a real call', () => {
    const calls = recorded();
    const missing = allFunctions()
      .filter((f) => !calls.some((c) => c.functionId === f.id))
      .map((f) => f.id);
    expect(missing, 'functions that made no AWS call in the run').toEqual([]);
    for (const service of ['dynamodb', 'events', 'secretsmanager', 'sts', 's3'])
      expect(
        calls.some((c) => c.service === service),
        `${service} was never called`,
      ).toBe(true);
  });

  it('grants no action that no code path of any function uses', () => {
    const used = new Set([...recorded().map((c) => c.action), ...NOT_REACHED_HERE.keys()]);
    const granted = new Set([...byFunction.values()].flatMap((f) => [...grantedActions(f).keys()]));
    const unusedByAll = [...granted].filter((a) => !used.has(a) && !USED_BY_LAMBDA.has(a)).sort();
    expect(unusedByAll, 'granted, and no function called it in the run').toEqual([]);
  });

  it('holds the AssumeRole grant to the organization when organizationId is set (aws:ResourceOrgID)', async () => {
    const org = 'o-abcdefghij';
    const { stack, resources } = synth({ organizationId: org });
    const f = stack.functions.get('inventory');
    const policies = functionPolicies(
      resources,
      stack.getLogicalId(f.fn.node.defaultChild as never),
      'inventory',
    );
    const assume = (orgId: string) =>
      judge(policies, {
        action: 'sts:AssumeRole',
        resource: MEMBER_ROLE,
        context: { 'aws:ResourceOrgID': orgId },
      });
    expect(await assume(org)).toBe('Allowed');
    expect(await assume('o-zyxwvutsrq')).not.toBe('Allowed');
  });

  it('denies every call no function may make', async () => {
    let probes = 0;
    for (const f of allFunctions()) {
      const policies = byFunction.get(f.id)!;
      for (const p of forbidden(policies)) {
        probes++;
        expect(await judge(policies, p), `${f.id}: ${p.action} on ${p.resource}`).not.toBe('Allowed');
      }
    }
    console.log(
      `IAM evaluation: ${probes} forbidden probes over ${allFunctions().length} functions, all denied`,
    );
  });
});
