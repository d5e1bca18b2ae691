import { performance } from 'node:perf_hooks';
import type { Resolver, WebhookRequest, WebhookResult, WebhookTransport } from '../webhooks/transport';
import { guardedRequest, type RequestFn } from './guarded-http';

export type { RequestFn } from './guarded-http';

const SNIPPET_BYTES = 512;

export interface NodeWebhookTransportOptions {
  readonly allowLoopback: boolean;
  /** Injected by tests (and nothing else) to answer with chosen addresses. */
  readonly resolver?: Resolver;
  readonly request?: RequestFn;
  readonly userAgent?: string;
}

/** Webhook POSTs through the shared SSRF guard (guarded-http.ts). */
export class NodeWebhookTransport implements WebhookTransport {
  constructor(private readonly opts: NodeWebhookTransportOptions) {}

  async post(req: WebhookRequest): Promise<WebhookResult> {
    const started = performance.now();
    const outcome = await guardedRequest<{ status: number; snippet: string }>(
      { allowLoopback: this.opts.allowLoopback, resolver: this.opts.resolver, request: this.opts.request },
      {
        url: new URL(req.url),
        method: 'POST',
        headers: {
          // JSON unless the caller says otherwise (DIDComm envelopes: application/didcomm-envelope-enc).
          'content-type': 'application/json',
          ...req.headers,
          'content-length': String(Buffer.byteLength(req.body)),
          'user-agent': this.opts.userAgent ?? 'credential-service-webhooks/1',
        },
        body: req.body,
        timeoutMs: req.timeoutMs,
        read: (res, done) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const answer = () => ({ kind: 'response' as const, value: { status: res.statusCode ?? 0, snippet: Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8') } });
          res.on('data', (c: Buffer) => {
            if (size < SNIPPET_BYTES) chunks.push(c);
            size += c.length;
            if (size >= SNIPPET_BYTES) done(answer());
          });
          res.on('end', () => done(answer()));
          res.on('error', () => done(answer()));
          // Once the status line is in, the receiver has answered: a body still trickling at the
          // deadline does not turn a 2xx into a timeout (and a retry, a duplicate).
          return { atDeadline: answer };
        },
      },
    );
    const durationMs = Math.round(performance.now() - started);
    switch (outcome.kind) {
      case 'response': {
        const { status, snippet } = outcome.value;
        return { outcome: { kind: 'response', status }, durationMs, ...(snippet ? { responseSnippet: snippet } : {}) };
      }
      case 'too_large': // the webhook reader keeps a snippet and never reports this
        return { outcome: { kind: 'network', detail: outcome.detail }, durationMs };
      default:
        return { outcome, durationMs };
    }
  }
}
