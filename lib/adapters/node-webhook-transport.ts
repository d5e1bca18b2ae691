import { lookup } from 'node:dns/promises';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressAllowed } from '../webhooks/address-policy';
import type { Resolver, WebhookRequest, WebhookResult, WebhookTransport } from '../webhooks/transport';

export type RequestFn = (protocol: 'http:' | 'https:', options: RequestOptions & { servername?: string }) => ClientRequest;

const defaultResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });
const defaultRequest: RequestFn = (protocol, options) => (protocol === 'https:' ? httpsRequest(options) : httpRequest(options));

const SNIPPET_BYTES = 512;

export interface NodeWebhookTransportOptions {
  readonly allowLoopback: boolean;
  /** Injected by tests (and nothing else) to answer with chosen addresses. */
  readonly resolver?: Resolver;
  readonly request?: RequestFn;
  readonly userAgent?: string;
}

/**
 * node:http(s) transport with the SSRF guard: the host is resolved here, every address it resolves
 * to must be allowed, and the connection goes to the vetted address (TLS still verifies the host
 * name through SNI), so a DNS answer cannot change between the check and the connect. No redirect
 * is followed (node does not follow them), and the whole exchange has one deadline.
 */
export class NodeWebhookTransport implements WebhookTransport {
  private readonly resolver: Resolver;
  private readonly request: RequestFn;

  constructor(private readonly opts: NodeWebhookTransportOptions) {
    this.resolver = opts.resolver ?? defaultResolver;
    this.request = opts.request ?? defaultRequest;
  }

  async post(req: WebhookRequest): Promise<WebhookResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const url = new URL(req.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: readonly { address: string }[];
    try {
      addresses = isIP(host) ? [{ address: host }] : await withTimeout(this.resolver(host), req.timeoutMs);
      if (addresses.length === 0) return { outcome: { kind: 'network', detail: 'host has no address' }, durationMs: elapsed() };
      const refused = addresses.find((a) => !addressAllowed(a.address, this.opts));
      if (refused) {
        return { outcome: { kind: 'refused_address', detail: `${host} resolves to a non-public address` }, durationMs: elapsed() };
      }
    } catch (err) {
      if (err instanceof DeadlineError) return { outcome: { kind: 'timeout' }, durationMs: elapsed() };
      return { outcome: { kind: 'network', detail: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? 'error'}` }, durationMs: elapsed() };
    }

    // Like a browser, a host with several vetted addresses is tried address by address while the
    // connection itself fails (nothing was sent yet, so moving on cannot duplicate a delivery).
    let last: Omit<WebhookResult, 'durationMs'> = { outcome: { kind: 'network', detail: 'no address tried' } };
    for (const { address } of addresses) {
      const remaining = req.timeoutMs - elapsed();
      if (remaining <= 0) return { outcome: { kind: 'timeout' }, durationMs: elapsed() };
      const attempt = await this.exchange(url, host, address, req, remaining);
      last = attempt.result;
      if (!attempt.connectFailed) break;
    }
    return { ...last, durationMs: elapsed() };
  }

  private exchange(url: URL, host: string, address: string, req: WebhookRequest, timeoutMs: number): Promise<{ result: Omit<WebhookResult, 'durationMs'>; connectFailed: boolean }> {
    return new Promise((resolve) => {
      let settled = false;
      let connected = false;
      const finish = (result: Omit<WebhookResult, 'durationMs'>, connectFailed = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ result, connectFailed });
      };
      const protocol = url.protocol as 'http:' | 'https:';
      const client = this.request(protocol, {
        host: address,
        family: isIP(address),
        port: url.port || (protocol === 'https:' ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: false,
        ...(isIP(host) ? {} : { servername: host }),
        headers: {
          ...req.headers,
          host: url.host,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(req.body)),
          'user-agent': this.opts.userAgent ?? 'credential-service-webhooks/1',
        },
      });
      // Once the status line is in, the receiver has answered: a body still trickling at the deadline
      // does not turn a 2xx into a timeout (and a retry, a duplicate).
      let answered: (() => void) | undefined;
      const timer = setTimeout(() => {
        if (answered) answered();
        else finish({ outcome: { kind: 'timeout' } });
        client.destroy();
      }, timeoutMs);
      client.on('socket', (socket) => socket.once('connect', () => (connected = true)));
      client.on('error', (err: NodeJS.ErrnoException) => finish({ outcome: { kind: 'network', detail: err.code ?? err.message } }, !connected));
      client.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const snippet = Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8');
          finish({ outcome: { kind: 'response', status: res.statusCode ?? 0 }, ...(snippet ? { responseSnippet: snippet } : {}) });
          res.destroy();
        };
        answered = done;
        res.on('data', (c: Buffer) => {
          if (size < SNIPPET_BYTES) chunks.push(c);
          size += c.length;
          if (size >= SNIPPET_BYTES) done();
        });
        res.on('end', done);
        res.on('error', done);
      });
      client.end(req.body);
    });
  }
}

class DeadlineError extends Error {}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DeadlineError('deadline')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
