/**
 * A tiny STS-compatible endpoint for tests: AssumeRole over the query protocol (form-encoded POST,
 * XML answer) on an ephemeral loopback port. It checks each request's SigV4 signature with the caller's
 * secret key, as STS does, and records what it received so tests can assert the signed request.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedAssumeRole {
  params: Record<string, string>;
  headers: Record<string, string>;
  /** The SigV4 signature checked against the caller's secret key. */
  signatureValid: boolean;
  accessKeyId: string;
  region: string;
}

export type StsAnswer =
  | { credentials?: { ttlSeconds?: number; expiration?: Date } }
  | { status: number; code: string; message: string };

export interface IssuedCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

export interface LocalSts {
  endpoint: string;
  received: ReceivedAssumeRole[];
  issued: IssuedCredentials[];
  /** Decides each answer; default: credentials valid for an hour. */
  answer: (params: Record<string, string>) => StsAnswer;
  stop(): Promise<void>;
}

const hex = (d: string | Buffer) => createHash('sha256').update(d).digest('hex');
const hmac = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();

/** Recomputes the Authorization header's SigV4 signature (POST /, form body) with `secretKey`. */
function verifySignature(req: IncomingMessage, body: string, secretKey: string): boolean {
  const auth = String(req.headers.authorization ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/sts\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return false;
  const [, , date, region, signed, signature] = m as unknown as string[];
  const names = signed!.split(';');
  const canonicalHeaders = names.map((n) => `${n}:${String(req.headers[n] ?? '').trim()}\n`).join('');
  const canonical = ['POST', '/', '', canonicalHeaders, signed, hex(body)].join('\n');
  const amzDate = String(req.headers['x-amz-date']);
  const scope = `${date}/${region}/sts/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, hex(canonical)].join('\n');
  let key = hmac(`AWS4${secretKey}`, date!);
  for (const part of [region!, 'sts', 'aws4_request']) key = hmac(key, part);
  return createHmac('sha256', key).update(toSign).digest('hex') === signature;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function success(params: Record<string, string>, c: IssuedCredentials): string {
  const account = params.RoleArn?.split(':')[4] ?? '000000000000';
  const role = params.RoleArn?.split('/').pop() ?? 'role';
  return `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>${c.accessKeyId}</AccessKeyId><SecretAccessKey>${c.secretAccessKey}</SecretAccessKey><SessionToken>${c.sessionToken}</SessionToken><Expiration>${c.expiration.toISOString()}</Expiration></Credentials><AssumedRoleUser><AssumedRoleId>AROAEXAMPLE:${xml(params.RoleSessionName ?? '')}</AssumedRoleId><Arn>arn:aws:sts::${account}:assumed-role/${xml(role)}/${xml(params.RoleSessionName ?? '')}</Arn></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>${randomBytes(8).toString('hex')}</RequestId></ResponseMetadata></AssumeRoleResponse>`;
}

function failure(code: string, message: string): string {
  return `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${xml(code)}</Code><Message>${xml(message)}</Message></Error><RequestId>${randomBytes(8).toString('hex')}</RequestId></ErrorResponse>`;
}

/** Starts the endpoint; `secretKey` is the caller's (the control plane's) secret access key. */
export async function startLocalSts(secretKey: string): Promise<LocalSts> {
  const sts: LocalSts = {
    endpoint: '',
    received: [],
    issued: [],
    answer: () => ({ credentials: {} }),
    stop: async () => {},
  };
  let counter = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const params = Object.fromEntries(new URLSearchParams(body));
    const cred = /Credential=([^/]+)\/\d{8}\/([^/]+)\//.exec(String(req.headers.authorization ?? ''));
    sts.received.push({
      params,
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      signatureValid: verifySignature(req, body, secretKey),
      accessKeyId: cred?.[1] ?? '',
      region: cred?.[2] ?? '',
    });
    const a =
      params.Action === 'AssumeRole'
        ? sts.answer(params)
        : { status: 400, code: 'InvalidAction', message: `${params.Action} is not served here` };
    res.setHeader('content-type', 'text/xml');
    if ('status' in a) {
      res.writeHead(a.status).end(failure(a.code, a.message));
      return;
    }
    counter++;
    const c: IssuedCredentials = {
      accessKeyId: `ASIATEST${String(counter).padStart(12, '0')}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: `FwoGZXIvYXdzE${randomBytes(48).toString('base64url')}`,
      expiration:
        a.credentials?.expiration ?? new Date(Date.now() + (a.credentials?.ttlSeconds ?? 3600) * 1000),
    };
    sts.issued.push(c);
    res.writeHead(200).end(success(params, c));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  sts.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sts.stop = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return sts;
}
