import { lookup } from 'node:dns/promises';
import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressAllowed, classifyAddress } from '../webhooks/address-policy';
import type { Resolver } from '../webhooks/transport';

export type RequestFn = (protocol: 'http:' | 'https:', options: RequestOptions & { servername?: string }) => ClientRequest;

const defaultResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });
const defaultRequest: RequestFn = (protocol, options) => (protocol === 'https:' ? httpsRequest(options) : httpRequest(options));

/** How one guarded exchange ended. `too_large` comes only from readers that bound the body. */
export type GuardedOutcome<T> =
  | { readonly kind: 'response'; readonly value: T }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'network'; readonly detail: string }
  | { readonly kind: 'refused_address'; readonly detail: string }
  | { readonly kind: 'too_large'; readonly detail: string };

/**
 * Reads a response once its status line is in and calls `done` once. What it returns decides what
 * the deadline means while the body is still arriving (`atDeadline`; without it, a timeout).
 */
export type ResponseReader<T> = (res: IncomingMessage, done: (outcome: GuardedOutcome<T>) => void) => { atDeadline?: () => GuardedOutcome<T> } | void;

export interface GuardPolicy {
  readonly allowLoopback: boolean;
  /** Every vetted address must be loopback (plain http is only ever allowed to loopback). */
  readonly loopbackOnly?: boolean;
  /** Injected by tests (and nothing else) to answer with chosen addresses / to count connections. */
  readonly resolver?: Resolver;
  readonly request?: RequestFn;
}

export interface GuardedRequest<T> {
  readonly url: URL;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly read: ResponseReader<T>;
  /** The caller's own deadline (e.g. the verifier's, over several requests): aborting ends the exchange as a timeout. */
  readonly signal?: AbortSignal;
}

/**
 * The SSRF guard, shared by every outbound request the service makes: the host is resolved here,
 * every address it resolves to must be allowed, and the connection goes to the vetted address (TLS
 * still verifies the host name through SNI), so a DNS answer cannot change between the check and
 * the connect. No redirect is followed (node does not follow them), and the whole exchange has one
 * deadline. Never throws: failures are outcomes.
 */
export async function guardedRequest<T>(policy: GuardPolicy, req: GuardedRequest<T>): Promise<GuardedOutcome<T>> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const { url } = req;
  if (req.signal?.aborted) return { kind: 'timeout' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: readonly { address: string }[];
  try {
    addresses = isIP(host) ? [{ address: host }] : await withTimeout((policy.resolver ?? defaultResolver)(host), req.timeoutMs, req.signal);
    if (addresses.length === 0) return { kind: 'network', detail: 'host has no address' };
    const refused = addresses.find((a) => !addressAllowed(a.address, policy) || (policy.loopbackOnly && classifyAddress(a.address) !== 'loopback'));
    if (refused) return { kind: 'refused_address', detail: `${host} resolves to a non-public address` };
  } catch (err) {
    if (err instanceof DeadlineError) return { kind: 'timeout' };
    return { kind: 'network', detail: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? 'error'}` };
  }

  // Like a browser, a host with several vetted addresses is tried address by address while the
  // connection itself fails (nothing was sent yet, so moving on cannot duplicate a request).
  let last: GuardedOutcome<T> = { kind: 'network', detail: 'no address tried' };
  for (const { address } of addresses) {
    const remaining = req.timeoutMs - elapsed();
    if (remaining <= 0 || req.signal?.aborted) return { kind: 'timeout' };
    const attempt = await exchange(policy.request ?? defaultRequest, host, address, req, remaining);
    last = attempt.outcome;
    if (!attempt.connectFailed) break;
  }
  return last;
}

function exchange<T>(request: RequestFn, host: string, address: string, req: GuardedRequest<T>, timeoutMs: number): Promise<{ outcome: GuardedOutcome<T>; connectFailed: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    let connected = false;
    const finish = (outcome: GuardedOutcome<T>, connectFailed = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      resolve({ outcome, connectFailed });
      client.destroy();
    };
    const onAbort = () => finish({ kind: 'timeout' });
    const { url } = req;
    const protocol = url.protocol as 'http:' | 'https:';
    const client = request(protocol, {
      host: address,
      family: isIP(address),
      port: url.port || (protocol === 'https:' ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method: req.method,
      agent: false,
      ...(isIP(host) ? {} : { servername: host }),
      headers: { ...req.headers, host: url.host },
    });
    let atDeadline: (() => GuardedOutcome<T>) | undefined;
    const timer = setTimeout(() => finish(atDeadline ? atDeadline() : { kind: 'timeout' }), timeoutMs);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    client.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    client.on('error', (err: NodeJS.ErrnoException) => finish({ kind: 'network', detail: err.code ?? err.message }, !connected));
    client.on('response', (res: IncomingMessage) => {
      const hooks = req.read(res, (outcome) => finish(outcome));
      if (hooks?.atDeadline) atDeadline = hooks.atDeadline;
    });
    client.end(req.body);
  });
}

class DeadlineError extends Error {}

async function withTimeout<T>(p: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeadlineError('deadline')), ms);
        onAbort = () => reject(new DeadlineError('aborted'));
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

// ---------------------------------------------------------------------------------------------
// GET with a bounded body, for documents the verifier fetches (DID documents, issuer metadata,
// status lists): the same guard, and failures as one error type.

export interface GuardedResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface GuardedGetOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly accept: string;
  readonly allowLoopback: boolean;
  /** Plain http, to loopback addresses only; the local runtime's setting, never a deployed one. */
  readonly allowHttp?: boolean;
  readonly resolver?: Resolver;
  readonly request?: RequestFn;
  readonly userAgent?: string;
  /** Ends the GET early (as a `timeout`): the caller's deadline. */
  readonly signal?: AbortSignal;
}

export type GuardedFetchFailure = Exclude<GuardedOutcome<unknown>['kind'], 'response'> | 'bad_url';

export class GuardedFetchError extends Error {
  constructor(
    readonly kind: GuardedFetchFailure,
    readonly url: string,
    detail?: string,
  ) {
    super(`GET ${url}: ${kind}${detail ? ` (${detail})` : ''}`);
    this.name = 'GuardedFetchError';
  }
}

/** GET through the SSRF guard. Any status is an answer; everything else throws GuardedFetchError. */
export async function guardedGet(rawUrl: string, opts: GuardedGetOptions): Promise<GuardedResponse> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new GuardedFetchError('bad_url', rawUrl, 'not an absolute URL');
  }
  if (url.username || url.password) throw new GuardedFetchError('bad_url', rawUrl, 'carries credentials');
  const http = url.protocol === 'http:';
  if (!(url.protocol === 'https:' || (http && opts.allowHttp && opts.allowLoopback))) throw new GuardedFetchError('bad_url', rawUrl, 'must use https');

  const outcome = await guardedRequest<GuardedResponse>(
    { allowLoopback: opts.allowLoopback, loopbackOnly: http, resolver: opts.resolver, request: opts.request },
    {
      url,
      method: 'GET',
      headers: { accept: opts.accept, 'user-agent': opts.userAgent ?? 'credential-service-verifier/1' },
      timeoutMs: opts.timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      read: (res, done) => {
        const tooLarge = () => done({ kind: 'too_large', detail: `body over ${opts.maxBytes} bytes` });
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > opts.maxBytes) return tooLarge();
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > opts.maxBytes) tooLarge();
          else chunks.push(c);
        });
        res.on('end', () => done({ kind: 'response', value: { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) } }));
        res.on('error', (err: NodeJS.ErrnoException) => done({ kind: 'network', detail: err.code ?? err.message }));
      },
    },
  );
  if (outcome.kind === 'response') return outcome.value;
  throw new GuardedFetchError(outcome.kind, rawUrl, 'detail' in outcome ? outcome.detail : undefined);
}

/** What the verifier's resolvers receive: a GET with the policy (loopback, timeout, limits) bound. */
export type GuardedFetch = (url: string, opts: { readonly accept: string; readonly maxBytes?: number; readonly signal?: AbortSignal }) => Promise<GuardedResponse>;

export function guardedFetcher(defaults: Omit<GuardedGetOptions, 'accept' | 'signal'>): GuardedFetch {
  return (url, opts) =>
    guardedGet(url, { ...defaults, accept: opts.accept, maxBytes: Math.min(opts.maxBytes ?? defaults.maxBytes, defaults.maxBytes), ...(opts.signal ? { signal: opts.signal } : {}) });
}
