import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { startReceiver, eventually, type Receiver } from '../helpers/receiver';
import { fenceTestNetwork } from '../helpers/loopback-only';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';

/**
 * Webhooks end to end on the local runtime: API -> outbox item -> table stream -> relay -> SQS ->
 * worker -> a real HTTP receiver on loopback. Signatures are checked with the `standardwebhooks`
 * package, an implementation independent of ours.
 */
let api: TestApi;
let rx: Receiver;

// The runtime runs in this process: whatever its SSRF guard decides, its sockets reach loopback only.
fenceTestNetwork();

// No name here resolves through real DNS: the SSRF guard asks this resolver.
const resolver = async (host: string) => {
  if (host === 'internal.example.test') return [{ address: '10.1.2.3', family: 4 }];
  if (host === 'metadata.example.test') return [{ address: '169.254.169.254', family: 4 }];
  throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
};

beforeAll(async () => {
  [api, rx] = await Promise.all([startTestApi({ webhookRetryDelaysSeconds: [1, 1, 1], webhookTimeoutMs: 2000, webhookResolver: resolver }), startReceiver()]);
});
afterAll(async () => {
  await Promise.all([api?.rt.stop(), rx?.close()]);
});

async function walletWithTargets(...paths: string[]) {
  const w = await api.newWallet();
  const urls = paths.map((p) => `${rx.url}${p}`);
  const put = await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls } });
  expect(put.status).toBe(200);
  return { ...w, urls };
}

async function ping(key: string) {
  const res = await api.call('POST', '/api/v1/settings/webhook-target-urls/ping', { key });
  expect(res.status).toBe(202);
  return res.body.event as { id: string; type: string; wallet_id: string; created_at: string; data: object };
}

async function deliveriesOf(key: string, eventId: string) {
  const res = await api.call('GET', `/api/v1/webhook-deliveries?event_id=${eventId}`, { key });
  expect(res.status).toBe(200);
  return res.body as any[];
}

async function settledDelivery(key: string, eventId: string, url: string, timeoutMs = 15000) {
  return eventually(
    async () => {
      const d = (await deliveriesOf(key, eventId)).find((x) => x.url === url);
      return d && !['pending', 'retrying'].includes(d.status) ? d : undefined;
    },
    timeoutMs,
    `delivery of ${eventId} to ${url} settled`,
  );
}

let pathCounter = 0;
const freshPath = (name: string) => `/${name}-${++pathCounter}`;

describe('webhook target URLs (contract 4.10)', () => {
  test('GET is [] at first; PUT replaces the list and returns it; GET shows it', async () => {
    const w = await api.newWallet();
    expect((await api.call('GET', '/api/v1/settings/webhook-target-urls', { key: w.apiKey })).body).toEqual([]);
    const urls = [`${rx.url}/a`, 'https://hooks.example.com/in?x=1'];
    const put = await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls } });
    expect(put).toMatchObject({ status: 200, body: urls });
    expect((await api.call('GET', '/api/v1/settings/webhook-target-urls', { key: w.apiKey })).body).toEqual(urls);
    const cleared = await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: {} });
    expect(cleared).toMatchObject({ status: 200, body: [] });
  });

  test.each([
    ['not a URL', ['hooks.example.com/in']],
    ['ftp scheme', ['ftp://hooks.example.com/in']],
    ['plain http to a public host', ['http://hooks.example.com/in']],
    ['credentials in the URL', ['https://user:pw@hooks.example.com/in']],
    ['a private address', ['https://10.0.0.8/in']],
    ['the metadata address', ['https://169.254.169.254/latest/meta-data']],
    ['an IPv4-mapped private address', ['https://[::ffff:192.168.1.1]/in']],
    ['a fragment', ['https://hooks.example.com/in#x']],
    ['a duplicate', ['https://hooks.example.com/in', 'https://hooks.example.com/in']],
    ['too many', Array.from({ length: 11 }, (_, i) => `https://hooks.example.com/${i}`)],
    ['too long', [`https://hooks.example.com/${'a'.repeat(2100)}`]],
    ['not strings', [42]],
  ])('%s is a 400 that changes nothing', async (_name, urls) => {
    const w = await walletWithTargets('/kept');
    const res = await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls } });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details.length).toBeGreaterThan(0);
    expect((await api.call('GET', '/api/v1/settings/webhook-target-urls', { key: w.apiKey })).body).toEqual(w.urls);
  });

  test('unknown fields, a non-array and bad JSON are 400s', async () => {
    const w = await api.newWallet();
    expectError(await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls: [], extra: 1 } }), 400, 'validation_failed');
    expectError(await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls: 'https://a.example' } }), 400, 'validation_failed');
    expectError(await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, rawBody: '{"urls": [' }), 400, 'malformed_json');
  });

  test('needs a wallet credential: none is 401, the base key 403', async () => {
    expect((await api.call('GET', '/api/v1/settings/webhook-target-urls')).status).toBe(401);
    expectError(await api.call('GET', '/api/v1/settings/webhook-target-urls', { key: api.baseKey }), 403, 'forbidden');
  });
});

describe('delivery', () => {
  test('ping reaches every target, signed per Standard Webhooks with the secret from the API', async () => {
    const p1 = freshPath('ping');
    const p2 = freshPath('ping');
    const w = await walletWithTargets(p1, p2);
    const event = await ping(w.apiKey);
    expect(event).toEqual({ id: expect.stringMatching(/^evt_/), type: 'ping', wallet_id: String(w.walletId), created_at: expect.any(String), data: expect.any(Object) });

    const [[r1], [r2]] = await Promise.all([rx.waitFor(p1), rx.waitFor(p2)]);
    const { secret } = (await api.call('GET', '/api/v1/settings/webhook-secret', { key: w.apiKey })).body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    for (const r of [r1!, r2!]) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toBe(event.id);
      expect(JSON.parse(r.body)).toEqual(event);
      expect(Object.keys(JSON.parse(r.body))).toEqual(['id', 'type', 'wallet_id', 'created_at', 'data']);
      expect(new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).toEqual(event);
      // A different wallet's secret does not verify.
    }
    const other = await api.newWallet();
    const otherSecret = (await api.call('GET', '/api/v1/settings/webhook-secret', { key: other.apiKey })).body.secret;
    expect(otherSecret).not.toBe(secret);
    expect(() => new Webhook(otherSecret).verify(r1!.body, r1!.headers as Record<string, string>)).toThrow();

    const d = await settledDelivery(w.apiKey, event.id, w.urls[0]!);
    expect(d).toMatchObject({ status: 'delivered', event_type: 'ping', attempt_count: 1, attempts: [{ attempt: 1, outcome: 'delivered', status_code: 200 }] });
    expect(Object.keys(d)).toEqual(['delivery_id', 'event_id', 'event_type', 'url', 'status', 'attempt_count', 'attempts', 'created_at', 'updated_at']);
  });

  test('ping without targets is a 409', async () => {
    const w = await api.newWallet();
    expectError(await api.call('POST', '/api/v1/settings/webhook-target-urls/ping', { key: w.apiKey }), 409, 'no_webhook_targets');
  });

  test('a 500 is retried with backoff until it succeeds', async () => {
    const p = freshPath('flaky');
    rx.on(p, [500, 503, 200]);
    const w = await walletWithTargets(p);
    const event = await ping(w.apiKey);
    const got = await rx.waitFor(p, 3);
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id, event.id]);
    // Retry delays are 1 s (+-20 %) in this runtime.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(700);
    const d = await settledDelivery(w.apiKey, event.id, w.urls[0]!);
    expect(d.status).toBe('delivered');
    expect(d.attempts.map((a: any) => a.status_code)).toEqual([500, 503, 200]);
  });

  test('retries stop when the schedule is exhausted', async () => {
    const p = freshPath('down');
    rx.on(p, 500);
    const w = await walletWithTargets(p);
    const event = await ping(w.apiKey);
    const d = await settledDelivery(w.apiKey, event.id, w.urls[0]!, 20000);
    expect(d).toMatchObject({ status: 'failed', attempt_count: 4, final_reason: 'retries exhausted' });
    expect(rx.received(p)).toHaveLength(4);
  });

  test('a 400 is final: one attempt, no retry', async () => {
    const p = freshPath('reject');
    rx.on(p, 400);
    const w = await walletWithTargets(p);
    const event = await ping(w.apiKey);
    const d = await settledDelivery(w.apiKey, event.id, w.urls[0]!);
    expect(d).toMatchObject({ status: 'failed', attempt_count: 1, attempts: [{ outcome: 'http_error', status_code: 400, response_snippet: 'status 400' }] });
    await new Promise((r) => setTimeout(r, 2500));
    expect(rx.received(p)).toHaveLength(1);
  });

  test('a redirect is not followed and is final', async () => {
    const p = freshPath('moved');
    rx.on(p, 301);
    const w = await walletWithTargets(p);
    const event = await ping(w.apiKey);
    const d = await settledDelivery(w.apiKey, event.id, w.urls[0]!);
    expect(d).toMatchObject({ status: 'failed', attempts: [{ status_code: 301 }] });
    expect(rx.received(`${p}-moved`)).toHaveLength(0);
  });

  test('one failing target does not delay or duplicate another', async () => {
    const bad = freshPath('bad');
    const good = freshPath('good');
    rx.on(bad, 500);
    const w = await walletWithTargets(bad, good);
    const event = await ping(w.apiKey);
    await rx.waitFor(good);
    const d = await settledDelivery(w.apiKey, event.id, w.urls[1]!);
    expect(d).toMatchObject({ status: 'delivered', attempt_count: 1 });
    await rx.waitFor(bad, 3, 20000);
    expect(rx.received(good)).toHaveLength(1);
  });

  test('410 Gone disables the target; later events skip it', async () => {
    const gone = freshPath('gone');
    const live = freshPath('live');
    rx.on(gone, 410);
    const w = await walletWithTargets(gone, live);
    const first = await ping(w.apiKey);
    expect(await settledDelivery(w.apiKey, first.id, w.urls[0]!)).toMatchObject({ status: 'failed', attempts: [{ status_code: 410 }] });
    // The delivery is recorded as failed before the target is disabled (two writes): wait for the second.
    const targets = await eventually(async () => {
      const body = (await api.call('GET', '/api/v1/settings/webhook-targets', { key: w.apiKey })).body;
      return body[0]?.state === 'disabled' ? body : undefined;
    }, 15000, 'target disabled');
    expect(targets).toEqual([
      { url: w.urls[0], state: 'disabled', added_at: expect.any(String), disabled_at: expect.any(String), disabled_reason: expect.stringContaining('410') },
      { url: w.urls[1], state: 'active', added_at: expect.any(String) },
    ]);
    const second = await ping(w.apiKey);
    await settledDelivery(w.apiKey, second.id, w.urls[1]!);
    expect((await deliveriesOf(w.apiKey, second.id)).map((d) => d.url)).toEqual([w.urls[1]]);
    expect(rx.received(gone)).toHaveLength(1);
    // PUT with the URL again re-enables it.
    await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls: w.urls } });
    expect((await api.call('GET', '/api/v1/settings/webhook-targets', { key: w.apiKey })).body.map((t: any) => t.state)).toEqual(['active', 'active']);
  });

  test('a target whose name resolves to a private or metadata address is refused on every attempt', async () => {
    const w = await api.newWallet();
    const urls = ['https://internal.example.test/hook', 'https://metadata.example.test/latest'];
    expect((await api.call('PUT', '/api/v1/settings/webhook-target-urls', { key: w.apiKey, body: { urls } })).status).toBe(200);
    const event = await ping(w.apiKey);
    for (const url of urls) {
      const d = await settledDelivery(w.apiKey, event.id, url, 20000);
      expect(d.status).toBe('failed');
      expect(d.attempts).toHaveLength(4);
      expect(d.attempts.every((a: any) => a.outcome === 'refused_address' && a.status_code === undefined)).toBe(true);
    }
  });
});

describe('signing secret rotation', () => {
  test('during the grace period both secrets sign; afterwards only the new one', async () => {
    const p = freshPath('rotate');
    const w = await walletWithTargets(p);
    const old = (await api.call('GET', '/api/v1/settings/webhook-secret', { key: w.apiKey })).body;
    expect(old).toEqual({ secret: expect.stringMatching(/^whsec_/) });

    const rotated = await api.call('POST', '/api/v1/settings/webhook-secret/rotate', { key: w.apiKey, body: { grace_period_seconds: 3600 } });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ secret: expect.stringMatching(/^whsec_/), previous_secret: old.secret, previous_secret_expires_at: expect.any(String) });
    expect(rotated.body.secret).not.toBe(old.secret);
    expect((await api.call('GET', '/api/v1/settings/webhook-secret', { key: w.apiKey })).body).toEqual(rotated.body);

    await ping(w.apiKey);
    const [during] = await rx.waitFor(p, 1);
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => new Webhook(old.secret).verify(during!.body, during!.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(rotated.body.secret).verify(during!.body, during!.headers as Record<string, string>)).not.toThrow();

    const again = await api.call('POST', '/api/v1/settings/webhook-secret/rotate', { key: w.apiKey, body: { grace_period_seconds: 0 } });
    expect(again.body).toEqual({ secret: expect.stringMatching(/^whsec_/) });
    await ping(w.apiKey);
    const after = (await rx.waitFor(p, 2))[1]!;
    expect(() => new Webhook(again.body.secret).verify(after.body, after.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(rotated.body.secret).verify(after.body, after.headers as Record<string, string>)).toThrow();
  });

  test('once a 1 s grace period has passed, the old secret no longer verifies a ping', async () => {
    const p = freshPath('grace');
    const w = await walletWithTargets(p);
    const old = (await api.call('GET', '/api/v1/settings/webhook-secret', { key: w.apiKey })).body;
    const rotated = await api.call('POST', '/api/v1/settings/webhook-secret/rotate', { key: w.apiKey, body: { grace_period_seconds: 1 } });
    expect(rotated.body).toEqual({ secret: expect.stringMatching(/^whsec_/), previous_secret: old.secret, previous_secret_expires_at: expect.any(String) });
    // Wait until the expiry is behind us (the runtime's clock is this process's).
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(rotated.body.previous_secret_expires_at) - Date.now()) + 50));
    expect((await api.call('GET', '/api/v1/settings/webhook-secret', { key: w.apiKey })).body).toEqual({ secret: rotated.body.secret });

    await ping(w.apiKey);
    const [after] = await rx.waitFor(p, 1);
    expect(String(after!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(rotated.body.secret).verify(after!.body, after!.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(old.secret).verify(after!.body, after!.headers as Record<string, string>)).toThrow();
  });

  test('a bad grace period is a 400', async () => {
    const w = await api.newWallet();
    const before = (await api.call('GET', '/api/v1/settings/webhook-secret', { key: w.apiKey })).body;
    expectError(await api.call('POST', '/api/v1/settings/webhook-secret/rotate', { key: w.apiKey, body: { grace_period_seconds: -1 } }), 400, 'validation_failed');
    expectError(await api.call('POST', '/api/v1/settings/webhook-secret/rotate', { key: w.apiKey, body: { grace_period_seconds: 9e9 } }), 400, 'validation_failed');
    expect((await api.call('GET', '/api/v1/settings/webhook-secret', { key: w.apiKey })).body).toEqual(before);
  });
});

describe('deliveries API', () => {
  test('redeliver sends the same event (same webhook-id) again as a new delivery', async () => {
    const p = freshPath('redeliver');
    const w = await walletWithTargets(p);
    const event = await ping(w.apiKey);
    const first = await settledDelivery(w.apiKey, event.id, w.urls[0]!);
    const again = await api.call('POST', `/api/v1/webhook-deliveries/${first.delivery_id}/redeliver`, { key: w.apiKey });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ event_id: event.id, status: 'pending', redelivery_of: first.delivery_id });
    const got = await rx.waitFor(p, 2);
    expect(got[1]!.headers['webhook-id']).toBe(event.id);
    const one = await eventually(async () => {
      const r = await api.call('GET', `/api/v1/webhook-deliveries/${again.body.delivery_id}`, { key: w.apiKey });
      return r.body.status === 'delivered' ? r.body : undefined;
    });
    expect(one.attempts).toHaveLength(1);
    expect((await api.call('GET', `/api/v1/webhook-deliveries/${first.delivery_id}`, { key: w.apiKey })).body).toEqual(first);
  });

  test('a stalled delivery (its job dead-lettered) is redelivered in one transaction: original closed, new one delivered', async () => {
    const p = freshPath('stalled');
    const w = await walletWithTargets(p);
    const event = await ping(w.apiKey);
    const first = await settledDelivery(w.apiKey, event.id, w.urls[0]!);
    // As if its retry job had been lost two hours ago: retrying, overdue, nothing queued.
    const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000).toISOString();
    await ddb.send(
      new UpdateCommand({
        TableName: process.env.TABLE_NAME,
        Key: { PK: `W#${w.walletId}`, SK: `DLV#${first.delivery_id}` },
        UpdateExpression: 'SET #s = :s, next_attempt_at = :t, updated_at = :t',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': 'retrying', ':t': twoHoursAgo },
      }),
    );
    ddb.destroy();
    const again = await api.call('POST', `/api/v1/webhook-deliveries/${first.delivery_id}/redeliver`, { key: w.apiKey });
    expect(again.status).toBe(202);
    const closed = await api.call('GET', `/api/v1/webhook-deliveries/${first.delivery_id}`, { key: w.apiKey });
    expect(closed.body).toMatchObject({ status: 'failed', final_reason: `stalled; redelivered as ${again.body.delivery_id}` });
    // The new delivery's first job went through the outbox and the relay.
    const got = await rx.waitFor(p, 2);
    expect(got[1]!.headers['webhook-id']).toBe(event.id);
    await eventually(async () => {
      const r = await api.call('GET', `/api/v1/webhook-deliveries/${again.body.delivery_id}`, { key: w.apiKey });
      return r.body.status === 'delivered' ? r.body : undefined;
    });
  });

  test('listing is newest first and filters by status', async () => {
    const p = freshPath('list');
    const w = await walletWithTargets(p);
    const e1 = await ping(w.apiKey);
    await settledDelivery(w.apiKey, e1.id, w.urls[0]!);
    const e2 = await ping(w.apiKey);
    await settledDelivery(w.apiKey, e2.id, w.urls[0]!);
    const all = (await api.call('GET', '/api/v1/webhook-deliveries', { key: w.apiKey })).body;
    expect(all.map((d: any) => d.event_id)).toEqual([e2.id, e1.id]);
    expect((await api.call('GET', '/api/v1/webhook-deliveries?limit=1', { key: w.apiKey })).body).toHaveLength(1);
    expect((await api.call('GET', '/api/v1/webhook-deliveries?status=failed', { key: w.apiKey })).body).toEqual([]);
    expectError(await api.call('GET', '/api/v1/webhook-deliveries?limit=0', { key: w.apiKey }), 400, 'validation_failed');
    expectError(await api.call('GET', '/api/v1/webhook-deliveries?status=nope', { key: w.apiKey }), 400, 'validation_failed');
  });

  test('unknown and malformed delivery ids', async () => {
    const w = await api.newWallet();
    expectError(await api.call('GET', '/api/v1/webhook-deliveries/dlv_01KAAAAAAAAAAAAAAAAAAAAAAA_0123abcd', { key: w.apiKey }), 404, 'not_found');
    expectError(await api.call('GET', '/api/v1/webhook-deliveries/nope', { key: w.apiKey }), 400, 'validation_failed');
    expectError(await api.call('POST', '/api/v1/webhook-deliveries/dlv_01KAAAAAAAAAAAAAAAAAAAAAAA_0123abcd/redeliver', { key: w.apiKey }), 404, 'not_found');
  });
});

describe('tenant isolation', () => {
  test("wallet A's events never reach B's targets, and B cannot see or redeliver A's deliveries", async () => {
    const pa = freshPath('tenant-a');
    const pb = freshPath('tenant-b');
    const a = await walletWithTargets(pa);
    const b = await walletWithTargets(pb);

    // A feature event: the super-admin creates a key for A.
    const created = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: String(a.walletId), roles: ['admin'], name: 'ci' } });
    expect(created.status).toBe(200);
    const [got] = await rx.waitFor(pa);
    const event = JSON.parse(got!.body);
    expect(event).toMatchObject({ type: 'api_key.created', wallet_id: String(a.walletId), data: { key_id: created.body.key_id, name: 'ci', status: 'active' } });
    expect(got!.body).not.toContain(created.body.api_key);
    expect(Object.keys(event.data)).not.toContain('mac');
    const pingA = await ping(a.apiKey);
    await rx.waitFor(pa, 2);

    const aDelivery = (await deliveriesOf(a.apiKey, pingA.id))[0];
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.received(pb)).toHaveLength(0);
    expect((await api.call('GET', '/api/v1/webhook-deliveries', { key: b.apiKey })).body).toEqual([]);
    expectError(await api.call('GET', `/api/v1/webhook-deliveries/${aDelivery.delivery_id}`, { key: b.apiKey }), 404, 'not_found');
    expectError(await api.call('POST', `/api/v1/webhook-deliveries/${aDelivery.delivery_id}/redeliver`, { key: b.apiKey }), 404, 'not_found');
    expect((await api.call('GET', '/api/v1/settings/webhook-target-urls', { key: b.apiKey })).body).toEqual(b.urls);
  });

  test('a revoked key publishes api_key.revoked once', async () => {
    const p = freshPath('revoked');
    const w = await walletWithTargets(p);
    const created = await api.call('POST', '/api/apikey/create', { key: api.baseKey, body: { wallet_id: String(w.walletId), roles: ['admin'] } });
    await rx.waitFor(p, 1);
    const revoke = () => api.call('POST', '/api/apikey/revoke', { key: api.baseKey, body: { wallet_id: String(w.walletId), key_id: created.body.key_id } });
    await Promise.all([revoke(), revoke()]);
    const [, revokedEvent] = await rx.waitFor(p, 2);
    expect(JSON.parse(revokedEvent!.body)).toMatchObject({ type: 'api_key.revoked', data: { key_id: created.body.key_id, status: 'revoked' } });
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.received(p)).toHaveLength(2);
  });
});
