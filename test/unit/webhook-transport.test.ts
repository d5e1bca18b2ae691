import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { NodeWebhookTransport, type RequestFn } from '../../lib/adapters/node-webhook-transport';
import { fenceTestNetwork, loopbackOnlyRequest } from '../helpers/loopback-only';
import { startReceiver, type Receiver } from '../helpers/receiver';

// Whatever the guard decides, nothing here connects outside loopback: the transports built without
// an injected request dial through node's sockets, which the fence wraps.
fenceTestNetwork();

const body = '{"id":"evt_1"}';
const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' };

/** A request function that must never be called: proves no connection is attempted. */
function forbiddenRequest(): { fn: RequestFn; calls: number } {
  const spy = { calls: 0, fn: (() => {
    spy.calls++;
    throw new Error('a connection was attempted');
  }) as RequestFn };
  return spy;
}

describe('SSRF guard: no connection to refused addresses', () => {
  test.each([
    [[{ address: '10.0.0.5', family: 4 }]],
    [[{ address: '169.254.169.254', family: 4 }]],
    [[{ address: 'fd00:ec2::254', family: 6 }]],
    [[{ address: '93.184.216.34', family: 4 }, { address: '192.168.1.10', family: 4 }]],
    [[{ address: '127.0.0.1', family: 4 }]],
  ])('a name resolving to %j is refused before connecting (deployed policy)', async (answer) => {
    const request = forbiddenRequest();
    const resolved: string[] = [];
    const t = new NodeWebhookTransport({
      allowLoopback: false,
      resolver: async (h) => {
        resolved.push(h);
        return answer;
      },
      request: request.fn,
    });
    const res = await t.post({ url: 'https://hooks.example.test/in', headers, body, timeoutMs: 1000 });
    expect(res.outcome).toEqual({ kind: 'refused_address', detail: expect.stringContaining('hooks.example.test') });
    expect(resolved).toEqual(['hooks.example.test']);
    expect(request.calls).toBe(0);
  });

  test('a literal private address is refused without a lookup or a connection', async () => {
    const request = forbiddenRequest();
    const lookups: string[] = [];
    const resolver = async (h: string) => {
      lookups.push(h);
      return [];
    };
    const t = new NodeWebhookTransport({ allowLoopback: true, resolver, request: request.fn });
    const res = await t.post({ url: 'https://172.20.0.9/x', headers, body, timeoutMs: 1000 });
    expect(res.outcome.kind).toBe('refused_address');
    expect(lookups).toEqual([]);
    expect(request.calls).toBe(0);
  });

  test('DNS failures and slow DNS are attempt outcomes, not exceptions', async () => {
    const request = forbiddenRequest();
    const failing = new NodeWebhookTransport({
      allowLoopback: false,
      resolver: async () => {
        throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
      },
      request: request.fn,
    });
    expect((await failing.post({ url: 'https://nx.example.test/', headers, body, timeoutMs: 1000 })).outcome).toEqual({ kind: 'network', detail: 'cannot resolve nx.example.test: ENOTFOUND' });
    const slow = new NodeWebhookTransport({ allowLoopback: false, resolver: () => new Promise(() => undefined), request: request.fn });
    expect((await slow.post({ url: 'https://slow.example.test/', headers, body, timeoutMs: 100 })).outcome).toEqual({ kind: 'timeout' });
    expect(request.calls).toBe(0);
  });
});

describe('HTTP exchange (loopback receiver)', () => {
  let rx: Receiver;
  let hang: Server;
  let hangUrl: string;
  beforeAll(async () => {
    rx = await startReceiver();
    hang = createServer(() => undefined); // accepts and never answers
    hang.listen(0, '127.0.0.1');
    await once(hang, 'listening');
    hangUrl = `http://127.0.0.1:${(hang.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await rx.close();
    hang.closeAllConnections();
    hang.close();
  });

  const local = new NodeWebhookTransport({ allowLoopback: true, userAgent: 'test-agent' });

  test('posts the body with the webhook headers to the vetted address and reports the status', async () => {
    rx.on('/ok', 204);
    const res = await local.post({ url: `${rx.url}/ok`, headers, body, timeoutMs: 2000 });
    expect(res.outcome).toEqual({ kind: 'response', status: 204 });
    const [got] = rx.received('/ok');
    expect(got!.body).toBe(body);
    expect(got!.headers).toMatchObject({ ...headers, 'content-type': 'application/json', 'user-agent': 'test-agent', host: new URL(rx.url).host });
  });

  test('a name that resolves to loopback is connected to at that address with the name as Host', async () => {
    rx.on('/named', 200);
    const port = new URL(rx.url).port;
    const t = new NodeWebhookTransport({ allowLoopback: true, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const res = await t.post({ url: `http://receiver.example.test:${port}/named`, headers, body, timeoutMs: 2000 });
    expect(res.outcome).toEqual({ kind: 'response', status: 200 });
    expect(rx.received('/named')[0]!.headers.host).toBe(`receiver.example.test:${port}`);
  });

  test('when the first vetted address refuses the connection, the next one is tried', async () => {
    rx.on('/fallback', 200);
    const port = new URL(rx.url).port;
    const request = loopbackOnlyRequest();
    const tried = request.dialled;
    // The receiver listens on 127.0.0.1 only, so ::1 on its port refuses (or is unreachable).
    const t = new NodeWebhookTransport({ allowLoopback: true, request, resolver: async () => [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }] });
    const res = await t.post({ url: `http://receiver.example.test:${port}/fallback`, headers, body, timeoutMs: 2000 });
    expect(res.outcome).toEqual({ kind: 'response', status: 200 });
    expect(tried).toEqual(['::1', '127.0.0.1']);
    expect(rx.received('/fallback')).toHaveLength(1);
  });

  test('an address that answered, even with an error status, is not followed by another (no duplicate delivery)', async () => {
    rx.on('/once', 503);
    const port = new URL(rx.url).port;
    const t = new NodeWebhookTransport({ allowLoopback: true, resolver: async () => [{ address: '127.0.0.1', family: 4 }, { address: '127.0.0.1', family: 4 }] });
    const res = await t.post({ url: `http://receiver.example.test:${port}/once`, headers, body, timeoutMs: 2000 });
    expect(res.outcome).toEqual({ kind: 'response', status: 503 });
    expect(rx.received('/once')).toHaveLength(1);
  });

  test('a 2xx whose body is still trickling at the deadline counts as the answer, not a timeout', async () => {
    const slowBody = createServer((_req, res) => {
      res.writeHead(200);
      res.write('ok so far'); // and never ends
    });
    slowBody.listen(0, '127.0.0.1');
    await once(slowBody, 'listening');
    try {
      const res = await local.post({ url: `http://127.0.0.1:${(slowBody.address() as { port: number }).port}/`, headers, body, timeoutMs: 300 });
      expect(res).toMatchObject({ outcome: { kind: 'response', status: 200 }, responseSnippet: 'ok so far' });
    } finally {
      slowBody.closeAllConnections();
      slowBody.close();
    }
  });

  test('keeps a snippet of the response body', async () => {
    rx.on('/bad', 422);
    const res = await local.post({ url: `${rx.url}/bad`, headers, body, timeoutMs: 2000 });
    expect(res).toMatchObject({ outcome: { kind: 'response', status: 422 }, responseSnippet: 'status 422' });
  });

  test('a receiver that never answers times out', async () => {
    const res = await local.post({ url: `${hangUrl}/`, headers, body, timeoutMs: 300 });
    expect(res.outcome).toEqual({ kind: 'timeout' });
    expect(res.durationMs).toBeGreaterThanOrEqual(250);
  });

  test('a closed port is a network error', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as { port: number }).port;
    closed.close();
    await once(closed, 'close');
    const res = await local.post({ url: `http://127.0.0.1:${port}/`, headers, body, timeoutMs: 1000 });
    expect(res.outcome).toEqual({ kind: 'network', detail: 'ECONNREFUSED' });
  });
});
