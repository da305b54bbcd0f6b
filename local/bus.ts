import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { allRules } from '../shared/capabilities.js';
import type { RuleSpec } from '../shared/platform/catalogue.js';
import { matches } from '../shared/platform/event-pattern.js';
import { EVENT_SOURCE } from '../shared/platform/events.js';
import type { AsyncOutcome, LocalInvoker } from './invoker.js';

interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Resources?: string[];
  EventBusName?: string;
  Time?: string;
}

/** One rule's delivery of an event: the function it invoked and how that ended. */
export interface Delivery extends AsyncOutcome {
  rule: string;
  functionId: string;
}

/** The envelope EventBridge wraps around a PutEvents entry. */
function envelope(entry: PutEventsEntry, detail: unknown) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': entry.DetailType ?? '',
    source: entry.Source ?? '',
    account: '000000000000',
    time: (entry.Time ? new Date(entry.Time) : new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: process.env.AWS_REGION ?? 'us-east-1',
    resources: entry.Resources ?? [],
    detail,
  };
}

export interface BusStats {
  published: number;
  deliveries: number;
  failedDeliveries: number;
  unmatched: number;
}

/**
 * The local stand-in for the EventBridge bus. It speaks the PutEvents wire protocol (AWS JSON 1.1), so
 * handlers publish through the real @aws-sdk/client-eventbridge client pointed at it, and it routes
 * each event to the functions whose rules (the same patterns the stack deploys) match it. Delivery is
 * asynchronous and at least once, with Lambda's retries and a dead-letter list on the invoker.
 */
export class LocalBus {
  readonly stats: BusStats = { published: 0, deliveries: 0, failedDeliveries: 0, unmatched: 0 };
  readonly log: { detailType: string; detail: unknown; time: string }[] = [];
  private inFlight = new Set<Promise<unknown>>();
  private idleWaiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
    private readonly invoker: LocalInvoker,
    private readonly rules: RuleSpec[],
    private readonly busName: string,
  ) {}

  static async start(opts: {
    invoker: LocalInvoker;
    busName: string;
    rules?: RuleSpec[];
  }): Promise<LocalBus> {
    let bus: LocalBus | undefined;
    const server = createServer((req, res) => void bus?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    bus = new LocalBus(
      server,
      `http://127.0.0.1:${port}`,
      opts.invoker,
      opts.rules ?? allRules(),
      opts.busName,
    );
    return bus;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(body));
    };
    const target = req.headers['x-amz-target'];
    if (target !== 'AWSEvents.PutEvents') {
      return reply(400, { __type: 'UnknownOperationException', message: `${target} is not served locally` });
    }
    let body: { Entries?: PutEventsEntry[] };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(400, { __type: 'SerializationException', message: 'body is not JSON' });
    }
    const entries = body.Entries ?? [];
    if (entries.length === 0 || entries.length > 10) {
      return reply(400, { __type: 'ValidationException', message: 'PutEvents takes 1 to 10 entries' });
    }
    const results = entries.map((e) => this.accept(e));
    reply(200, { FailedEntryCount: results.filter((r) => r.ErrorCode).length, Entries: results });
  }

  private accept(entry: PutEventsEntry): { EventId?: string; ErrorCode?: string; ErrorMessage?: string } {
    if (entry.EventBusName && entry.EventBusName !== this.busName)
      return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: `no bus ${entry.EventBusName}` };
    let detail: unknown;
    try {
      detail = JSON.parse(entry.Detail ?? '{}');
    } catch {
      return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is not valid JSON' };
    }
    const event = envelope(entry, detail);
    this.stats.published++;
    this.log.push({ detailType: event['detail-type'], detail, time: event.time });
    this.route(event);
    return { EventId: event.id };
  }

  private route(event: Record<string, unknown>): Promise<Delivery>[] {
    const targets = this.rules.filter((r) => matches(r.pattern, event));
    if (targets.length === 0) this.stats.unmatched++;
    return targets.map((rule) => {
      this.stats.deliveries++;
      const p = this.invoker.invokeAsyncOutcome(rule.target, event, `rule:${rule.id}`).then((o) => {
        if (!o.ok) this.stats.failedDeliveries++;
        return { rule: rule.id, functionId: rule.target, ...o };
      });
      this.inFlight.add(p);
      void p.finally(() => {
        this.inFlight.delete(p);
        if (this.inFlight.size === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
      return p;
    });
  }

  /**
   * Puts one event on the bus as PutEvents would, and resolves with how each function its rules route
   * it to ended (`fleetscope run` reports per cluster what the scheduler's fan-out does not).
   */
  async deliver(entry: { detailType: string; detail: unknown; resources?: string[] }): Promise<Delivery[]> {
    const event = envelope(
      { DetailType: entry.detailType, Source: EVENT_SOURCE, Resources: entry.resources ?? [] },
      entry.detail,
    );
    this.stats.published++;
    this.log.push({ detailType: event['detail-type'], detail: entry.detail, time: event.time });
    return Promise.all(this.route(event));
  }

  /** Resolves when every delivery (including those caused by deliveries) has finished. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) {
      await new Promise<void>((r) => this.idleWaiters.push(r));
      await new Promise((r) => setImmediate(r));
    }
  }

  async stop(): Promise<void> {
    await this.drain();
    await new Promise<void>((r) => {
      this.server.closeAllConnections();
      this.server.close(() => r());
    });
  }
}
