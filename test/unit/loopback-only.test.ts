import { once } from 'node:events';
import { createServer, get } from 'node:http';
import net from 'node:net';
import { fencedConnect, isLoopbackAddress, loopbackOnlyRequest, OutsideConnectionError, refusedConnections } from '../helpers/loopback-only';

/**
 * The test network fence itself (test/helpers/loopback-only.ts). Its refusals are checked over a
 * tripwire standing in for the real connect, so that nothing here could reach a socket even if the
 * fence were broken.
 */
afterEach(() => refusedConnections.splice(0));

test.each(['127.0.0.1', '127.45.6.7', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'])('%s is loopback', (a) => {
  expect(isLoopbackAddress(a)).toBe(true);
});

test.each(['10.0.0.1', '169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '0.0.0.0', '::', '128.0.0.1', '93.184.216.34', 'localhost', 'metadata.example.test', '::ffff:10.0.0.1'])('%s is not loopback', (a) => {
  expect(isLoopbackAddress(a)).toBe(false);
});

function tripwire() {
  const calls: unknown[][] = [];
  const inner = function (this: net.Socket, ...args: unknown[]) {
    calls.push(args);
    return this;
  };
  return { calls, connect: fencedConnect(inner) };
}
const socket = {} as net.Socket;

test('an IP outside loopback throws before the inner connect, in every call form; loopback and IPC sockets pass', () => {
  const t = tripwire();
  for (const args of [[{ host: '169.254.169.254', port: 80 }], [[{ host: '10.1.2.3', port: 443 }, () => undefined]], [80, '192.0.2.1'], ['443', 'fd00:ec2::254']]) {
    expect(() => t.connect.apply(socket, args)).toThrow(OutsideConnectionError);
  }
  expect(t.calls).toEqual([]);
  expect(refusedConnections).toHaveLength(4);
  t.connect.apply(socket, [{ host: '127.0.0.1', port: 1 }]);
  t.connect.apply(socket, [[{ host: '::1', port: 1 }]]);
  t.connect.apply(socket, [{ path: '/tmp/some.sock' }]);
  t.connect.apply(socket, [8080]);
  expect(t.calls).toHaveLength(4);
});

test('a host name is connected to only if every address it resolves to is loopback (one answer or all)', async () => {
  const t = tripwire();
  const answers: Record<string, string[]> = { 'inside.test': ['127.0.0.1', '::1'], 'outside.test': ['127.0.0.1', '10.0.0.7'] };
  const lookup = (host: string, options: { all?: boolean }, cb: (err: Error | null, a: unknown, f?: number) => void) =>
    options.all ? cb(null, answers[host]!.map((address) => ({ address, family: net.isIP(address) }))) : cb(null, answers[host]![answers[host]!.length - 1], 4);
  const resolveThrough = async (host: string, all: boolean) => {
    const opts = { host, port: 443, lookup };
    t.connect.apply(socket, [opts]);
    return new Promise<Error | null>((resolve) => (opts.lookup as typeof lookup)(host, { all }, (err) => resolve(err)));
  };
  expect(await resolveThrough('inside.test', true)).toBeNull();
  expect(await resolveThrough('inside.test', false)).toBeNull();
  expect(await resolveThrough('outside.test', true)).toBeInstanceOf(OutsideConnectionError);
  expect(await resolveThrough('outside.test', false)).toBeInstanceOf(OutsideConnectionError);
  expect(refusedConnections).toEqual(['outside.test (10.0.0.7)', 'outside.test (10.0.0.7)']);
});

test('installed on net.Socket, node:http goes through it and a real loopback exchange passes', async () => {
  const server = createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const proto = net.Socket.prototype as unknown as { connect: (...a: unknown[]) => net.Socket };
  const original = proto.connect;
  let reached = 0;
  proto.connect = fencedConnect(function (this: net.Socket, ...args: unknown[]) {
    reached++;
    return original.apply(this, args);
  });
  try {
    const { port } = server.address() as net.AddressInfo;
    const body = await new Promise<string>((resolve, reject) => {
      get(`http://localhost:${port}/`, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect({ body, reached }).toEqual({ body: 'ok', reached: 1 });
  } finally {
    proto.connect = original;
    server.close();
  }
});

test('the injectable connector records what it dials and throws on anything but loopback', () => {
  const request = loopbackOnlyRequest();
  expect(() => request('https:', { host: '169.254.169.254', port: 443 })).toThrow(OutsideConnectionError);
  expect(request.dialled).toEqual(['169.254.169.254']);
  expect(refusedConnections).toEqual(['169.254.169.254:443']);
});
