/**
 * BULK EMAIL over HTTP against the local runtime and the SES emulator: a mixed batch lands in the right
 * arrays, each valid recipient gets exactly one mail (text, HTML, the QR code inline) whose offer an
 * independent wallet redeems for the right credential; a repeat sends nothing, and neither does a job
 * delivered twice at once (the recipient's claim); an expired offer is
 * refused. (SES throttling: test/unit/email-sender.test.ts, with an injected mailer.)
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESClient } from '@aws-sdk/client-ses';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_TAA } from '../../infra/local/runtime';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { SesMailer } from '../../lib/adapters/ses-mailer';
import { emailKeys, type EmailJob } from '../../lib/email/bulk';
import { OfferMailer } from '../../lib/email/sender';
import { OutboxPublisher } from '../../lib/events/publisher';
import { ExchangeService } from '../../lib/oid4vci/exchanges';
import type { ItemKey } from '../../lib/store/port';
import { tenantScope } from '../../lib/store/keys';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { verifySdJwtVc, issuerKeyResolver } from '../helpers/issued-credentials';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';
import { SpecWallet } from '../helpers/spec-wallet';

let api: TestApi;

async function ok<T = any>(p: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const res = await p;
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function issuerWallet(t: TestApi, label: string) {
  const w = await t.newWallet();
  const key = w.apiKey;
  await ok(t.call('POST', '/api/v1/accept-taa', { key, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } }), 'accept-taa');
  const did = (await ok(t.call('POST', '/api/v1/create-did', { key, body: { method: 'key', options: { key_type: 'p256' } } }), 'create-did')).did.did;
  await ok(t.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(did)}`, { key }), 'set-public-did');
  const configuration = await ok(
    t.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', {
      key,
      body: { id: 'Membership', vct: 'https://example.com/membership', claims: { name: { mandatory: true }, level: { value_type: 'integer' } }, display: [{ name: 'Membership card' }] },
    }),
    'configuration',
  );
  return { key, walletId: w.walletId, label, supportedCredId: String(configuration.supported_cred_id) };
}

interface StoredMail {
  destination: { to: string[] };
  subject: string;
  body: { text?: string; html?: string };
  attachments?: { content?: string; contentType?: string }[];
  messageId: string;
}

async function mailsTo(t: TestApi, address: string): Promise<StoredMail[]> {
  const res = await fetch(`${t.rt.mailViewerUrl}/store`);
  const body = (await res.json()) as { emails: StoredMail[] };
  return body.emails.filter((m) => m.destination.to.some((to) => to.includes(address)));
}

async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out; last: ${JSON.stringify(v).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const offerUriIn = (text: string) => /openid-credential-offer:\/\/\S+/.exec(text)?.[0];

beforeAll(async () => {
  api = await startTestApi();
}, 60_000);
afterAll(async () => {
  await api?.rt.stop();
});

test('a mixed batch: the three arrays, one mail per valid address, and an offer a wallet redeems for the right claims', async () => {
  const w = await issuerWallet(api, 'Acme');
  const tag = `b${Date.now()}`;
  const ada = `ada.${tag}@example.org`;
  const grace = `grace.${tag}@example.org`;
  const body = {
    emails: [
      { email: ` ${ada.toUpperCase().replace('@EXAMPLE.ORG', '@Example.ORG')} `, schema_id: 'Membership', time_to_accept: 3, attributes: [{ name: 'name', value: 'Ada' }, { name: 'level', value: '3' }] },
      { email: grace, schema_id: 'Membership', time_to_accept: 1, attributes: [{ name: 'name', value: 'Grace' }] },
      { email: `not an address ${tag}`, schema_id: 'Membership', time_to_accept: 1, attributes: [] },
      { email: `x.${tag}@example.org`, schema_id: 'NoSuchSchema', time_to_accept: 1, attributes: [] },
      { email: `y.${tag}@example.org`, schema_id: 'Membership', time_to_accept: 1, attributes: [{ name: 'level', value: '1' }] },
      { email: `z.${tag}@example.org`, schema_id: 'Membership', time_to_accept: 1, attributes: [{ name: 'name', value: 'Z' }, { name: 'nickname', value: 'z' }] },
      { email: grace, schema_id: 'Membership', time_to_accept: 1, attributes: [{ name: 'name', value: 'Grace' }] },
    ],
  };
  const res = await ok(api.call('POST', '/api/v1/emails/verify', { key: w.key, body }), 'verify');
  expect(res.emailsSuccess).toEqual([body.emails[0]!.email, grace]);
  expect(res.invalidEmails).toEqual([`not an address ${tag}`]);
  expect(res.emailsFailure).toEqual([`x.${tag}@example.org`, `y.${tag}@example.org`, `z.${tag}@example.org`]);

  // Sent to the normalised address: the local part as given, the domain in lower case.
  const [mail] = await eventually(() => mailsTo(api, `${ada.split('@')[0]!.toUpperCase()}@example.org`), (m) => m.length === 1);
  await eventually(() => mailsTo(api, grace), (m) => m.length === 1);
  expect(mail!.subject).toMatch(/Membership card/);
  expect(mail!.body.text).toMatch(/openid-credential-offer:\/\//);
  // The QR code travels inline (the emulator's parser shows the cid: image as a data: URI).
  expect(mail!.body.html).toMatch(/<img src="(cid:|data:image\/png)/);
  expect((mail!.attachments ?? []).some((a) => a.contentType === 'image/png')).toBe(true);

  const offer = offerUriIn(mail!.body.text!)!;
  const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
  const got = await wallet.receive(offer);
  const vc = await verifySdJwtVc(got.credentials[0]!, { resolveIssuerKey: issuerKeyResolver(api.rt.url) });
  expect(vc.payload).toMatchObject({ name: 'Ada', level: 3 });

  // A repeat sends nobody anything new and answers the same.
  expect(await ok(api.call('POST', '/api/v1/emails/verify', { key: w.key, body }), 'repeat')).toEqual(res);
  await new Promise((r) => setTimeout(r, 2500));
  expect(await mailsTo(api, grace)).toHaveLength(1);

  const records = await ok(api.call('GET', '/api/v1/emails', { key: w.key }), 'list');
  expect(records.filter((r: any) => r.state === 'sent')).toHaveLength(2);
  expect(records.filter((r: any) => r.state === 'failed').map((r: any) => r.failure_reason).sort()).toEqual(['invalid_attributes', 'invalid_attributes', 'unknown_schema']);
}, 90_000);

test('malformed requests are 400s with {error, code}; another wallet sees none of the records', async () => {
  const w = await issuerWallet(api, 'Other');
  for (const body of [{}, { emails: 'x' }, { emails: [{ email: 'a@example.org' }] }, { emails: Array.from({ length: 10_001 }, () => ({ email: 'a@example.org', schema_id: 'M', time_to_accept: 1, attributes: [] })) }]) {
    expectError(await api.call('POST', '/api/v1/emails/verify', { key: w.key, body }), 400, 'validation_failed');
  }
  expectError(await api.call('POST', '/api/v1/emails/verify', { key: w.key, rawBody: '{"emails": [' }), 400, 'malformed_json');
  expect((await api.call('POST', '/api/v1/emails/verify', { body: { emails: [] } })).status).toBe(401);
  expect(await ok(api.call('GET', '/api/v1/emails', { key: w.key }), 'list')).toEqual([]);
});

test('an offer whose time has passed is refused at the token endpoint', async () => {
  const w = await issuerWallet(api, 'Expiring');
  const address = `late.${Date.now()}@example.org`;
  await ok(api.call('POST', '/api/v1/emails/verify', { key: w.key, body: { emails: [{ email: address, schema_id: 'Membership', time_to_accept: 1, attributes: [{ name: 'name', value: 'L' }] }] } }), 'verify');
  const [mail] = await eventually(() => mailsTo(api, address), (m) => m.length === 1);
  const [record] = await ok(api.call('GET', '/api/v1/emails?state=sent', { key: w.key }), 'list');
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
  await ddb.send(new UpdateCommand({ TableName: api.rt.tableName, Key: { PK: `W#${w.walletId}`, SK: `VCX#${record.exchange_id}` }, UpdateExpression: 'SET code_expires_at = :t', ExpressionAttributeValues: { ':t': Date.now() - 1 } }));
  ddb.destroy();
  await expect(new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }).receive(offerUriIn(mail!.body.text!)!)).rejects.toThrow();
  expect((await ok(api.call('GET', `/api/v1/oid4vci/exchanges/${record.exchange_id}`, { key: w.key }), 'exchange')).state).toBe('expired');
}, 60_000);

test('one job delivered twice at once (both deliveries read the recipient before either claims it): exactly one mail', async () => {
  const w = await issuerWallet(api, 'Twice');
  const address = `twice.${Date.now()}@example.org`;
  const job: EmailJob = {
    wallet_id: String(w.walletId),
    request_id: randomUUID(),
    index: 0,
    email: address,
    schema_id: 'Membership',
    supported_cred_id: w.supportedCredId,
    credential_subject: { name: 'Twice' },
    expires_in: 86400,
    base_url: api.rt.url,
  };
  const recordKey = emailKeys.record(tenantScope(job.wallet_id), job.request_id, job.index);
  // Both deliveries' first read of the recipient returns only once both have made it: the claim alone
  // (the lease, as DynamoDB evaluates its condition) decides who mails.
  let reads = 0;
  let bothRead!: () => void;
  const barrier = new Promise<void>((r) => (bothRead = r));
  class BarrierStore extends DynamoDbStore {
    override async get(key: ItemKey, opts?: { consistent?: boolean }) {
      const item = await super.get(key, opts);
      if (key.PK === recordKey.PK && key.SK === recordKey.SK && reads < 2) {
        if (++reads === 2) bothRead();
        await barrier;
      }
      return item;
    }
  }
  const client = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
  const ses = new SESClient({ endpoint: api.rt.endpoints.ses });
  const store = new BarrierStore(() => client, api.rt.tableName);
  const events = new OutboxPublisher(store);
  const sender = new OfferMailer({ store, events, exchanges: new ExchangeService({ store, events, refs: new PublicRefs(store) }), mailer: new SesMailer(ses), from: 'credentials@example.invalid', maxReceives: 5 });
  const outcomes = await Promise.all([sender.run(job, 1), sender.run(job, 1)]);
  client.destroy();
  ses.destroy();
  expect(outcomes.sort()).toEqual(['sent', 'skipped']);
  // Give a second mail, were there one, time to land.
  await new Promise((r) => setTimeout(r, 500));
  expect(await mailsTo(api, address)).toHaveLength(1);
  const records = await ok(api.call('GET', `/api/v1/emails?request_id=${job.request_id}`, { key: w.key }), 'list');
  expect(records).toEqual([expect.objectContaining({ email: address, state: 'sent' })]);
}, 60_000);
