import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { addressAllowed, classifyAddress } from '../../lib/webhooks/address-policy';
import { retryDelaySeconds, verdictOf } from '../../lib/webhooks/retry-policy';
import { formatSecret, signatureHeader } from '../../lib/webhooks/signing';
import { targetUrlProblem } from '../../lib/webhooks/target-url';
import { loadConfig } from '../../lib/config';

describe('SSRF address policy', () => {
  test.each([
    '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.0.1', '169.254.169.254', '169.254.0.1', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '192.0.2.1', 'fc00::1', 'fd00:ec2::254', 'fe80::1', '::', 'ff02::1', '2001:db8::1',
    '::ffff:10.0.0.1', '::ffff:a00:1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', 'not-an-ip',
    '::10.0.0.1', '::a00:1', '::ffff:0:a00:1', '::ffff:0:10.0.0.1', '64:ff9b::1', '64:ff9b::10.1.2.3', '3fff::1', '5f00::1',
    // One address in each remaining range of the block list (benchmarking, 6to4 relay, documentation, IETF, reserved; NAT64 local, discard, Teredo and ORCHID, 6to4, site-local).
    '198.18.0.1', '198.19.255.254', '192.88.99.1', '198.51.100.7', '203.0.113.9', '192.0.0.8', '240.0.0.1', '0.1.2.3',
    '64:ff9b:1::a00:1', '100::1', '2001:0:4136:e378::1', '2001:10::1', '2002:c000:204::1', 'fec0::1', 'fe80::a:b',
    // NAT64 with a multi-digit dotted part, IPv4-compatible 0.0.0.255, IPv4-mapped and NAT64 addresses written out in full.
    '64:ff9b::192.168.1.1', '::ff', '0:0:0:0:0:ffff:a00:1', '0:0:0:0:0:ffff:10.1.2.3', '64:ff9b:0:0:0:0:a00:1',
    // Not an IP address, though parseInt reads its groups as ::ffff:8.8.8.8 (it stops at the first non-hex character).
    '::ffff:808:808zz',
    // A zone id does not hide the address before it, nor a written-out address too long for BlockList with one.
    'fe80::1%eth0', '::ffff:10.0.0.1%eth0', '::ffff:169.254.169.254%1', '64:ff9b::a00:1%2', 'fe80:0000:0000:0000:0000:0000:100.100.100.100%eth0',
    // IPv4-compatible 0.0.0.10 (0.0.0.0/8): the last octet read whole, not as ::1.
    '::0.0.0.10',
  ])('%s is refused', (address) => {
    expect(addressAllowed(address, { allowLoopback: true })).toBe(false);
    expect(addressAllowed(address, { allowLoopback: false })).toBe(false);
  });

  // A zone id (isIP allows letters, digits, `-`, `.` and `:` after `%`) is not read as part of the address.
  test.each(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:127.0.0.1%lo', '::1%lo', '::1%1.2.3.4'])('loopback %s only where the local runtime allows it', (address) => {
    expect(classifyAddress(address)).toBe('loopback');
    expect(addressAllowed(address, { allowLoopback: false })).toBe(false);
    expect(addressAllowed(address, { allowLoopback: true })).toBe(true);
  });

  test.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '64:ff9b::93.184.216.34', '2606:4700:0:0:0:0:0:1111'])('public %s is allowed', (address) => {
    expect(addressAllowed(address, { allowLoopback: false })).toBe(true);
  });
});

describe('target URL checks', () => {
  const deployed = { allowLoopback: false };
  const local = { allowLoopback: true };
  test('https on a public name passes everywhere', () => {
    expect(targetUrlProblem('https://hooks.example.com/in?x=1', deployed)).toBeNull();
  });
  test('loopback targets (http or https) pass only locally', () => {
    for (const url of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'https://localhost/x', 'http://[::1]:9/x']) {
      expect(targetUrlProblem(url, local)).toBeNull();
      expect(targetUrlProblem(url, deployed)).not.toBeNull();
    }
  });
  test('a trailing dot does not hide a loopback name', () => {
    expect(targetUrlProblem('https://localhost./x', deployed)).not.toBeNull();
    expect(targetUrlProblem('https://foo.localhost./x', deployed)).not.toBeNull();
  });
  test('plain http to anything else is refused even locally', () => {
    expect(targetUrlProblem('http://hooks.example.com/x', local)).toMatch(/https/);
  });
  test('private literals are refused even locally', () => {
    expect(targetUrlProblem('https://10.1.1.1/x', local)).toMatch(/private/);
  });
});

describe('retry policy', () => {
  test.each([
    [200, 'delivered'], [204, 'delivered'], [500, 'retry'], [503, 'retry'], [429, 'retry'], [408, 'retry'],
    [400, 'failed'], [401, 'failed'], [404, 'failed'], [301, 'failed'], [410, 'disable_target'],
  ] as const)('HTTP %i -> %s', (status, verdict) => {
    expect(verdictOf({ kind: 'response', status })).toBe(verdict);
  });
  test('timeouts, connection errors and refused addresses are retried', () => {
    expect(verdictOf({ kind: 'timeout' })).toBe('retry');
    expect(verdictOf({ kind: 'network', detail: 'ECONNREFUSED' })).toBe('retry');
    expect(verdictOf({ kind: 'refused_address', detail: 'x' })).toBe('retry');
  });
  test('the default schedule grows exponentially and spans about a day; jitter stays within +-20 %', () => {
    const schedule = loadConfig({ KEY_BACKEND: 'local', TABLE_NAME: 't', LOCAL_MASTER_KEY: 'a'.repeat(64) }).webhookRetryDelaysSeconds;
    for (let i = 1; i < schedule.length; i++) expect(schedule[i]!).toBeGreaterThanOrEqual(schedule[i - 1]!);
    const total = schedule.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeGreaterThan(20);
    expect(total / 3600).toBeLessThan(30);
    expect(retryDelaySeconds(schedule, 1, () => 0)).toBe(12);
    expect(retryDelaySeconds(schedule, 1, () => 1)).toBe(18);
    expect(retryDelaySeconds(schedule, schedule.length + 1)).toBeNull();
  });
});

describe('Standard Webhooks signature', () => {
  const key = new Uint8Array(32).fill(7);
  const key2 = new Uint8Array(32).fill(9);
  const body = JSON.stringify({ id: 'evt_1', type: 'ping', data: {} });
  const ts = Math.floor(Date.now() / 1000);

  test('verifies with the standardwebhooks library (independent implementation)', () => {
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': signatureHeader([key], 'evt_1', ts, body) };
    expect(new Webhook(formatSecret(key)).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(formatSecret(key2)).verify(body, headers)).toThrow();
    expect(() => new Webhook(formatSecret(key)).verify(body.replace('ping', 'pong'), headers)).toThrow();
  });

  test('the secret handed to the tenant is whsec_ and the base64 key (the Standard Webhooks secret format)', () => {
    expect(formatSecret(key)).toBe(`whsec_${Buffer.from(key).toString('base64')}`);
  });

  test('is the spec construction: v1,base64(HMAC-SHA256(key, id.timestamp.body)); one per key', () => {
    const expected = createHmac('sha256', key).update(`evt_1.${ts}.${body}`).digest('base64');
    expect(signatureHeader([key], 'evt_1', ts, body)).toBe(`v1,${expected}`);
    const both = signatureHeader([key, key2], 'evt_1', ts, body);
    expect(both.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(ts), 'webhook-signature': both };
    expect(() => new Webhook(formatSecret(key2)).verify(body, headers)).not.toThrow();
  });
});
