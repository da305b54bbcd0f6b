/** One raw HTTPS exchange with a real kube-apiserver, as a client certificate's holder (TLS verified). */
import { request } from 'node:https';
import type { ClientCredentials } from '../envtest/apiserver.js';
import type { J } from './compare.js';

export interface Answer {
  status: number;
  contentType: string;
  text: string;
  json?: J;
}

export interface Endpoint {
  url: string;
  caPem: string;
}

export function send(
  server: Endpoint,
  who: ClientCredentials,
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server.url),
      {
        method,
        ca: server.caPem,
        cert: who.certPem,
        key: who.keyPem,
        headers: {
          Accept: 'application/json',
          // A DELETE's body (DeleteOptions) needs its length said: Node frames a DELETE neither
          // chunked nor with a length by default, and the server would read the body as the next request.
          ...(body === undefined
            ? {}
            : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) }),
        },
        timeout: 20_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          const type = String(res.headers['content-type'] ?? '').split(';')[0] ?? '';
          resolve({ status: res.statusCode ?? 0, contentType: type, text, json: parse(text) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 20 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

function parse(text: string): J {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
