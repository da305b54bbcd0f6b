/**
 * Response compression as kube-apiserver does it (APIResponseCompression, on by default; the
 * deferredResponseWriter of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/writers.go):
 *  - only when the request's Accept-Encoding lists the token `gzip` (split on commas, trimmed, exact:
 *    `gzip;q=1` is not recognised, as upstream's negotiateContentEncoding does not parse q-values);
 *  - only for API objects (gets, lists, discovery), never for watches, logs or health checks;
 *  - only when the body is MORE than 128 KiB (`len(p) > defaultGzipThresholdBytes`): a streamed body
 *    is buffered until it passes the threshold, then everything goes through gzip at level 1;
 *  - headers `Content-Encoding: gzip` and `Vary: Accept-Encoding`; a Content-Length only when the
 *    compressed body is small enough for Go's net/http to know it (see GoFraming).
 */
import type { ServerResponse } from 'node:http';
import { constants, createGzip, type Gzip } from 'node:zlib';

/** defaultGzipThresholdBytes: a body of at most this many bytes is sent as it is. */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** Upstream's defaultGzipContentEncodingLevel: cheapest CPU for nearly the best ratio on JSON. */
const GZIP_LEVEL = 1;

/** Whether the request asks for gzip the way negotiateContentEncoding reads Accept-Encoding. */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  // Go's Header.Get: the first value of a repeated header.
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return false;
  return value.split(',').some((token) => token.trim() === 'gzip');
}

/** Where a document is written in pieces: the list path streams its items (text, or bytes for protobuf). */
export interface BodyWriter {
  write(chunk: string | Buffer): void;
  end(chunk?: string | Buffer): void;
}

/**
 * Go's net/http framing, which kube-apiserver's responses get: the first 2048 bytes a handler writes are
 * buffered (bufferBeforeChunkingSize); a handler that ends within them gets a Content-Length, any
 * longer body is sent chunked. So a list compressed to 500 bytes has a length, a 130 KB one not.
 */
class GoFraming {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private started = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly status: number,
    private readonly headers: Record<string, string | string[]>,
  ) {}

  write(b: Buffer): void {
    if (this.started) {
      this.res.write(b);
      return;
    }
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes <= GO_CHUNKING_BUFFER_BYTES) return;
    this.started = true;
    this.res.writeHead(this.status, this.headers);
    for (const p of this.pending) this.res.write(p);
    this.pending = [];
  }

  end(): void {
    if (this.started) {
      this.res.end();
      return;
    }
    const body = Buffer.concat(this.pending, this.pendingBytes);
    this.res.writeHead(this.status, { ...this.headers, 'Content-Length': body.length });
    this.res.end(body);
  }
}

/** net/http's bufferBeforeChunkingSize. */
const GO_CHUNKING_BUFFER_BYTES = 2048;

/**
 * A response body written in pieces, compressed as upstream does: held back while it is at most the
 * threshold, sent as it is when it ends there, gzip-compressed from the start once it passes it.
 * Without `compress`, the pieces go out as they are written.
 */
export class DeferredBody implements BodyWriter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private gzip?: Gzip;
  private plain?: GoFraming;

  constructor(
    private readonly res: ServerResponse,
    private readonly status: number,
    private readonly headers: Record<string, string | string[]>,
    private readonly compress: boolean,
  ) {}

  write(chunk: string | Buffer): void {
    if (this.gzip) {
      this.gzip.write(chunk);
      return;
    }
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (!this.compress) {
      this.plainFraming().write(b);
      return;
    }
    this.held.push(b);
    this.heldBytes += b.length;
    if (this.heldBytes > GZIP_THRESHOLD_BYTES) this.startGzip();
  }

  end(chunk?: string | Buffer): void {
    if (chunk?.length) this.write(chunk);
    if (this.gzip) {
      this.gzip.end();
      return;
    }
    const out = this.plainFraming();
    for (const b of this.held) out.write(b);
    this.held = [];
    out.end();
  }

  private plainFraming(): GoFraming {
    this.plain ??= new GoFraming(this.res, this.status, this.headers);
    return this.plain;
  }

  private startGzip(): void {
    const out = new GoFraming(this.res, this.status, {
      ...this.headers,
      'Content-Encoding': 'gzip',
      Vary: 'Accept-Encoding',
    });
    const gzip = createGzip({ level: GZIP_LEVEL, flush: constants.Z_NO_FLUSH });
    gzip.on('data', (b: Buffer) => out.write(b));
    gzip.on('end', () => out.end());
    gzip.on('error', () => this.res.destroy());
    for (const b of this.held) gzip.write(b);
    this.held = [];
    this.gzip = gzip;
  }
}
