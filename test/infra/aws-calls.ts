/**
 * Records every AWS API call made in this process, by the function whose invocation made it: an SDK
 * middleware (initialize step) added to each client's stack at its first send, so it sees the
 * operation as IAM authorizes it (DynamoDBDocumentClient's commands arrive as the DynamoDB operations
 * they marshal to) and the input's resource names. Which function made a call comes from an
 * AsyncLocalStorage the caller enters around an invocation (`during`), so concurrent invocations of
 * different functions in one process are told apart.
 *
 * Names are recorded as the function would see them deployed: a resource named by one of the
 * function's environment variables (its table, bus, bucket) is recorded as `{{VAR}}`, for the
 * evaluator to replace by what the template sets that variable to (test/infra/iam-eval.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ENV } from '../../shared/platform/config.js';

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';

export interface AwsCall {
  functionId: string;
  /** IAM service prefix: dynamodb, events, secretsmanager, sts, s3. */
  service: string;
  /** IAM action, e.g. dynamodb:PutItem (a transaction's items are recorded as their own actions). */
  action: string;
  /** The ARN IAM authorizes it on, with {{VAR}} placeholders. */
  resource: string;
  /** Condition keys the request carries (e.g. sts:ExternalId). */
  context: Record<string, string>;
}

const SERVICES: Record<string, string> = {
  DynamoDBClient: 'dynamodb',
  EventBridgeClient: 'events',
  SecretsManagerClient: 'secretsmanager',
  STSClient: 'sts',
  S3Client: 's3',
};
/** The variables whose values name a function's own resources, by service. */
const NAMED_BY = {
  dynamodb: [ENV.table, ENV.idempotencyTable],
  events: [ENV.bus],
  s3: [ENV.reportBucket],
} as const;

const named = (service: keyof typeof NAMED_BY, name: string): string => {
  for (const v of NAMED_BY[service]) if (process.env[v] && process.env[v] === name) return `{{${v}}}`;
  return name;
};
const arn = (service: string, rest: string) => `arn:aws:${service}:${REGION}:${ACCOUNT}:${rest}`;
const tableArn = (name: string, index?: string) =>
  arn('dynamodb', `table/${named('dynamodb', name)}${index ? `/index/${index}` : ''}`);

type Input = Record<string, unknown>;
type Call = Omit<AwsCall, 'functionId'>;

/** DynamoDB's operations as IAM sees them: one call per table, and per item of a transaction. */
function dynamodbCalls(op: string, input: Input): Call[] {
  const call = (action: string, resource: string): Call => ({
    service: 'dynamodb',
    action: `dynamodb:${action}`,
    resource,
    context: {},
  });
  if (op === 'BatchGetItem' || op === 'BatchWriteItem')
    return Object.keys((input.RequestItems ?? {}) as Input).map((t) => call(op, tableArn(t)));
  if (op === 'TransactWriteItems' || op === 'TransactGetItems')
    return ((input.TransactItems ?? []) as Input[]).map((item) => {
      const [kind, body] = Object.entries(item)[0] as [string, Input];
      const action = {
        Put: 'PutItem',
        Update: 'UpdateItem',
        Delete: 'DeleteItem',
        ConditionCheck: 'ConditionCheckItem',
        Get: 'GetItem',
      }[kind]!;
      return call(action, tableArn(String(body.TableName)));
    });
  return [call(op, tableArn(String(input.TableName), input.IndexName as string | undefined))];
}

function secretArn(id: string): string {
  if (id.startsWith('arn:')) return id;
  // Secrets Manager appends "-" and six characters to every secret's name in its ARN.
  return arn('secretsmanager', `secret:${id}-AbCdEf`);
}

/** The IAM view of one SDK operation: action, resource ARN and the condition keys it sets. */
export function callsOf(client: string, command: string, input: Input): Call[] {
  const service = SERVICES[client];
  if (!service) throw new Error(`an AWS call through ${client}, which the recorder does not know`);
  const op = command.replace(/Command$/, '');
  if (service === 'dynamodb') return dynamodbCalls(op, input);
  const one = (resource: string, context: Record<string, string> = {}): Call[] => [
    { service, action: `${service}:${op}`, resource, context },
  ];
  switch (`${service}:${op}`) {
    case 'events:PutEvents': {
      const buses = new Set(
        ((input.Entries ?? []) as Input[]).map((e) => String(e.EventBusName ?? 'default')),
      );
      return [...buses].flatMap((b) =>
        one(b.startsWith('arn:') ? b : arn('events', `event-bus/${named('events', b)}`)),
      );
    }
    case 'secretsmanager:GetSecretValue':
      return one(secretArn(String(input.SecretId)));
    case 'sts:AssumeRole':
      return one(
        String(input.RoleArn),
        input.ExternalId ? { 'sts:ExternalId': String(input.ExternalId) } : {},
      );
    case 's3:PutObject':
    case 's3:GetObject':
      return one(`arn:aws:s3:::${named('s3', String(input.Bucket))}/${String(input.Key)}`);
    default:
      return one('*');
  }
}

/** Smithy's Client, which every AWS SDK v3 client of this install extends (one copy: @smithy/core). */
const Client = Object.getPrototypeOf(DynamoDBClient.prototype).constructor as {
  prototype: { send: (...a: unknown[]) => unknown; middlewareStack: unknown };
};

const current = new AsyncLocalStorage<string>();
const instrumented = new WeakSet<object>();
let installed = false;
const sink: AwsCall[] = [];

/** Every call recorded since `install`, and calls made outside any `during` (the test's own). */
export const recorded = (): AwsCall[] => sink;

/** Adds the recording middleware to every SDK client of this process at its first send. */
export function install(): void {
  if (installed) return;
  installed = true;
  const send = Client.prototype.send;
  Client.prototype.send = function (this: { middlewareStack: unknown }, ...args: unknown[]) {
    const stack = this.middlewareStack as { add: (...a: unknown[]) => void };
    if (!instrumented.has(stack)) {
      instrumented.add(stack);
      stack.add(
        (next: (a: unknown) => unknown, context: { clientName: string; commandName: string }) =>
          (a: { input: Input }) => {
            const functionId = current.getStore();
            if (functionId)
              for (const c of callsOf(context.clientName, context.commandName, a.input))
                sink.push({ functionId, ...c });
            return next(a);
          },
        { step: 'initialize', name: 'fleetscopeIamRecorder', priority: 'high' },
      );
    }
    return send.apply(this, args);
  };
}

/** Runs `fn` as an invocation of `functionId`: the AWS calls it makes are that function's. */
export function during<T>(functionId: string, fn: () => Promise<T>): Promise<T> {
  return current.run(functionId, fn);
}
