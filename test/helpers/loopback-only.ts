import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import net from 'node:net';
import type { RequestFn } from '../../lib/adapters/guarded-http';

/**
 * The test process's own network fence: whatever the SSRF guard under test decides, a test can only
 * ever connect to loopback. Two layers, both deciding "loopback" by this file's own rule (not by
 * lib/webhooks/address-policy.ts, which is what the tests check):
 *
 * - {@link loopbackOnlyRequest}: a connector to inject where an outbound path takes one (the
 *   `request` of the guarded HTTP client: webhook transport, the verifier's fetches, and any later
 *   sender built on guardedRequest). It records what was dialled and throws on any other address.
 * - {@link fenceTestNetwork}: the socket layer, for paths that dial on their own (the local runtime's
 *   workers inside an integration test, fetch/undici): every `net.Socket#connect` of the process to
 *   a non-loopback address throws before a packet leaves; a host name is only connected to when
 *   every address it resolves to is loopback. The file's hooks then fail on any attempt recorded.
 *
 * DNS itself is not fenced (a lookup is not a connection of ours); the SSRF tests inject a resolver.
 */

export class OutsideConnectionError extends Error {
  constructor(readonly target: string) {
    super(`test network fence: refused a connection to ${target} (tests connect to loopback only)`);
    this.name = 'OutsideConnectionError';
  }
}

/** 127.0.0.0/8 and ::1 (also written out, or IPv4-mapped). Anything that is not an IP literal is not loopback. */
export function isLoopbackAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (!net.isIPv6(h)) return false;
  if (h === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(h)) return true;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && net.isIPv4(mapped[1]!) && mapped[1]!.startsWith('127.');
}

/** Every attempt the fence refused in this process (a test file's afterAll expects none). */
export const refusedConnections: string[] = [];

function refuse(target: string): OutsideConnectionError {
  refusedConnections.push(target);
  return new OutsideConnectionError(target);
}

/**
 * A connector for {@link RequestFn} slots: dials loopback addresses with node's http/https, records
 * each dialled address in `dialled`, and throws (synchronously, inside the test) on any other.
 */
export function loopbackOnlyRequest(): RequestFn & { readonly dialled: string[] } {
  const dialled: string[] = [];
  const fn: RequestFn = (protocol, options) => {
    const host = String(options.host ?? options.hostname ?? 'localhost');
    dialled.push(host);
    if (!isLoopbackAddress(host)) throw refuse(`${host}:${String(options.port ?? '')}`);
    return protocol === 'https:' ? httpsRequest(options) : httpRequest(options);
  };
  return Object.assign(fn, { dialled });
}

type ConnectFn = (this: net.Socket, ...args: unknown[]) => net.Socket;
type LookupFn = (hostname: string, options: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => void;

interface ConnectOptions {
  host?: string;
  port?: number | string;
  path?: string;
  lookup?: LookupFn;
}

/** The options object of a Socket#connect call, in any of node's call forms (net.connect passes a normalized array). */
function connectOptions(args: unknown[]): ConnectOptions | { host: string; fixed: true } | null {
  const first = args[0];
  if (Array.isArray(first)) return typeof first[0] === 'object' && first[0] !== null ? (first[0] as ConnectOptions) : null;
  if (typeof first === 'object' && first !== null) return first as ConnectOptions;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return { host: typeof args[1] === 'string' ? args[1] : 'localhost', fixed: true };
  return null; // a path: an IPC socket, not the network
}

/**
 * Wraps `connect` so that every socket connection goes to loopback or throws. Returns the wrapper;
 * {@link fenceTestNetwork} installs it on net.Socket.prototype (tests of the fence pass their own inner
 * connect, so that nothing can reach a real socket even if the fence were broken).
 */
export function fencedConnect(inner: ConnectFn): ConnectFn {
  return function (this: net.Socket, ...args: unknown[]) {
    const opts = connectOptions(args);
    if (opts && !('path' in opts && opts.path)) {
      const host = opts.host ?? 'localhost';
      if (net.isIP(host)) {
        if (!isLoopbackAddress(host)) throw refuse(`${host}:${String('port' in opts ? opts.port : '')}`);
      } else if ('fixed' in opts) {
        if (host !== 'localhost') throw refuse(host);
      } else {
        // A name: connected to only if each address it resolves to is loopback.
        const resolve: LookupFn = opts.lookup ?? (dnsLookup as unknown as LookupFn);
        opts.lookup = (hostname, options, callback) =>
          resolve(hostname, options, (err, address, family) => {
            if (err) return callback(err, address, family);
            const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
            const outside = all.find((a) => !isLoopbackAddress(a));
            if (outside !== undefined) return callback(refuse(`${hostname} (${outside})`), address, family);
            callback(null, address, family);
          });
      }
    }
    return inner.apply(this, args);
  };
}

/**
 * Installs the socket-layer fence for the calling test file (beforeAll) and removes it afterwards
 * (afterAll), failing the file if any connection outside loopback was attempted in it.
 */
export function fenceTestNetwork(): void {
  const proto = net.Socket.prototype as unknown as { connect: ConnectFn };
  let original: ConnectFn | undefined;
  let before = 0;
  beforeAll(() => {
    original = proto.connect;
    proto.connect = fencedConnect(original);
    before = refusedConnections.length;
  });
  afterAll(() => {
    if (original) proto.connect = original;
    expect(refusedConnections.slice(before)).toEqual([]);
  });
}
