import { GuardedFetchError, guardedGet, type GuardedGetOptions } from '../../lib/adapters/guarded-http';
import { startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { fenceTestNetwork, loopbackOnlyRequest } from '../helpers/loopback-only';
import { eventually } from '../helpers/receiver';

// Whatever the guard decides, nothing here connects outside loopback (the fence throws first).
fenceTestNetwork();

let server: DocumentServer;
beforeAll(async () => {
  server = await startDocumentServer();
});
afterAll(() => server.close());

function spy() {
  const request = loopbackOnlyRequest();
  return { request, dialled: request.dialled };
}
const base = (extra: Partial<GuardedGetOptions> = {}): GuardedGetOptions => ({ timeoutMs: 1000, maxBytes: 1024, accept: 'application/json', allowLoopback: true, allowHttp: true, ...extra });

async function failure(p: Promise<unknown>): Promise<GuardedFetchError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(GuardedFetchError);
  return err as GuardedFetchError;
}

test('answers status, headers and body, sending Accept', async () => {
  server.serve('/doc', { body: '{"a":1}', headers: { 'content-type': 'application/json', 'cache-control': 'max-age=9' } });
  const res = await guardedGet(`${server.origin}/doc`, base());
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('max-age=9');
  expect(res.body.toString()).toBe('{"a":1}');
  expect(server.requests.at(-1)!.headers.accept).toBe('application/json');
});

test('a redirect is an answer, never followed', async () => {
  server.serve('/moved', { status: 302, headers: { location: '/doc-target' } });
  server.serve('/doc-target', { body: 'x' });
  expect((await guardedGet(`${server.origin}/moved`, base())).status).toBe(302);
  expect(server.hits('/doc-target')).toBe(0);
});

test('plain http only with allowHttp, and only to loopback addresses', async () => {
  const s = spy();
  expect((await failure(guardedGet(`${server.origin}/doc`, base({ allowHttp: false, request: s.request })))).kind).toBe('bad_url');
  const publicHost = guardedGet('http://docs.example.test/doc', base({ request: s.request, resolver: async () => [{ address: '93.184.216.34', family: 4 }] }));
  expect((await failure(publicHost)).kind).toBe('refused_address');
  expect(s.dialled).toEqual([]);
});

test('a literal link-local address is refused without a lookup or a connection; credentials in the URL are refused', async () => {
  const s = spy();
  const lookups: string[] = [];
  const resolver = async (h: string) => (lookups.push(h), []);
  expect((await failure(guardedGet('https://169.254.169.254/latest/meta-data', base({ request: s.request, resolver })))).kind).toBe('refused_address');
  expect((await failure(guardedGet('https://[fd00:ec2::254]/', base({ request: s.request, resolver })))).kind).toBe('refused_address');
  expect((await failure(guardedGet('https://user:pw@docs.example.test/', base({ request: s.request, resolver })))).kind).toBe('bad_url');
  expect(lookups).toEqual([]);
  expect(s.dialled).toEqual([]);
});

test('the body limit holds with and without a content-length; the deadline covers a trickling body', async () => {
  server.serve('/big', { body: 'x'.repeat(2000) });
  server.serve('/big-chunked', { body: 'x'.repeat(2000), chunked: true });
  expect((await failure(guardedGet(`${server.origin}/big`, base()))).kind).toBe('too_large');
  expect((await failure(guardedGet(`${server.origin}/big-chunked`, base()))).kind).toBe('too_large');
  expect((await guardedGet(`${server.origin}/big`, base({ maxBytes: 2000 }))).body.length).toBe(2000);
  server.serve('/late', { body: 'x', delayMs: 500 });
  expect((await failure(guardedGet(`${server.origin}/late`, base({ timeoutMs: 200 })))).kind).toBe('timeout');
  server.serve('/trickle', { body: 'x', trickle: true });
  expect((await failure(guardedGet(`${server.origin}/trickle`, base({ timeoutMs: 200 })))).kind).toBe('timeout');
});

test("the caller's signal ends a GET in flight at once (a timeout), and the connection is closed", async () => {
  server.serve('/slow-signal', { body: '{}', delayMs: 3000 });
  const controller = new AbortController();
  const pending = failure(guardedGet(`${server.origin}/slow-signal`, base({ timeoutMs: 5000, signal: controller.signal })));
  // Aborted once the request is in flight (the server has it), however slow the machine.
  await eventually(async () => server.hits('/slow-signal') > 0 || undefined, 5000, 'the request to arrive');
  const aborted = performance.now();
  controller.abort();
  const err = await pending;
  expect(err.kind).toBe('timeout');
  expect(performance.now() - aborted).toBeLessThan(1000);
  await eventually(async () => server.abandoned.includes('/slow-signal') || undefined, 2000, 'the connection to close');
  // Already aborted: nothing is sent.
  const before = server.requests.length;
  expect((await failure(guardedGet(`${server.origin}/slow-signal`, base({ signal: controller.signal })))).kind).toBe('timeout');
  expect(server.requests.length).toBe(before);
});
