import { simpleParser } from 'mailparser';
import { MailerRejectedError, MailerThrottledError, type Mailer } from '../../lib/email/mailer';
import { emailKeys, emailRecordView, FINAL, type EmailJob } from '../../lib/email/bulk';
import { AppError } from '../../lib/http/errors';
import type { ItemStore } from '../../lib/store/port';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import { OfferMailer } from '../../lib/email/sender';
import { draftFromSdJwt } from '../../lib/oid4vci/supported';
import { oid4vciFixture, putWallet, scope, BASE } from '../helpers/oid4vci-fixture';
import { laggingReads } from '../helpers/store-hooks';

/** The email worker's work for one recipient, in-process: one offer, one mail, the outcome recorded once. */

async function setup(mailer: Mailer, opts: { now?: () => Date } = {}) {
  const f = await oid4vciFixture();
  await putWallet(f.store, { label: 'Acme' });
  // Offers by email come from the wallet's public DID.
  await f.dids.setPublic(scope, f.did.did);
  const sleeps: number[] = [];
  const sender = new OfferMailer({
    store: f.store,
    events: f.publisher,
    exchanges: f.exchanges,
    mailer,
    from: 'credentials@acme.example',
    maxReceives: 5,
    backoff: { attempts: 4, baseMs: 10, sleep: async (ms) => void sleeps.push(ms) },
    ...(opts.now ? { now: opts.now } : {}),
  });
  const job: EmailJob = { wallet_id: '7', request_id: 'req-1', index: 0, email: 'ada@example.org', schema_id: 'Pid', supported_cred_id: f.config.supported_cred_id, credential_subject: { given_name: 'Ada' }, expires_in: 86400, base_url: BASE };
  return { f, sender, job, sleeps };
}

test('throttled twice, then sent: one mail, the record sent with its exchange, one email.sent event', async () => {
  const sent: Buffer[] = [];
  let calls = 0;
  const { f, sender, job, sleeps } = await setup({
    async send(raw) {
      if (++calls <= 2) throw new MailerThrottledError('Throttling: Maximum sending rate exceeded.');
      sent.push(raw);
      return { messageId: 'm-1' };
    },
  });
  expect(await sender.run(job, 1)).toBe('sent');
  expect(calls).toBe(3);
  expect(sleeps).toHaveLength(2);
  const mail = await simpleParser(sent[0]!);
  expect(mail.subject).toBe('Acme offers you a Pid');
  expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe('ada@example.org');
  const record = (await f.store.get(emailKeys.record(scope, 'req-1', 0)))!;
  expect(record).toMatchObject({ state: 'sent', message_id: 'm-1', exchange_id: expect.any(String) });
  expect((await f.exchange(String(record.exchange_id))).state).toBe('offer');
  expect(f.events('email.sent')).toHaveLength(1);
  // The same message again (SQS delivers at least once): nobody is mailed twice.
  expect(await sender.run(job, 2)).toBe('skipped');
  expect(sent).toHaveLength(1);
});

test('two deliveries of one job at once: one claims the recipient, the other skips; one mail', async () => {
  let sends = 0;
  const { sender, job } = await setup({
    async send() {
      sends++;
      await new Promise((r) => setTimeout(r, 20));
      return { messageId: `m-${sends}` };
    },
  });
  const outcomes = await Promise.all([sender.run(job, 1), sender.run(job, 1)]);
  expect(outcomes.sort()).toEqual(['sent', 'skipped']);
  expect(sends).toBe(1);
});

test('a rejected mail is final: the offer is deleted, the record failed, one email.failed event', async () => {
  const { f, sender, job } = await setup({
    async send() {
      throw new MailerRejectedError('MessageRejected: Email address is not verified.');
    },
  });
  expect(await sender.run(job, 1)).toBe('failed');
  const record = (await f.store.get(emailKeys.record(scope, 'req-1', 0)))!;
  expect(record).toMatchObject({ state: 'failed', failure_reason: 'mail_rejected' });
  expect(await f.store.get({ PK: 'W#7', SK: `VCX#${record.exchange_id}` })).toBeUndefined();
  expect(f.events('email.failed')).toHaveLength(1);
});

test('still throttled: retried by SQS with a fresh offer each time; the last receive records the failure before the DLQ', async () => {
  const { f, sender, job } = await setup({
    async send() {
      throw new MailerThrottledError('Throttling: Daily message quota exceeded.');
    },
  });
  await expect(sender.run(job, 1)).rejects.toBeInstanceOf(MailerThrottledError);
  const first = String((await f.store.get(emailKeys.record(scope, 'req-1', 0)))!.exchange_id);
  await expect(sender.run(job, 5)).rejects.toBeInstanceOf(MailerThrottledError);
  const record = (await f.store.get(emailKeys.record(scope, 'req-1', 0)))!;
  expect(record).toMatchObject({ state: 'failed', failure_reason: 'mail_undeliverable' });
  // The first attempt's offer, never mailed, was deleted before the second made its own.
  expect(await f.store.get({ PK: 'W#7', SK: `VCX#${first}` })).toBeUndefined();
  expect(f.events('email.failed')).toHaveLength(1);
});

test("the mail names the wallet by its label (line breaks flattened: no header injection) or its id, and the credential by its display name", async () => {
  const sent: Buffer[] = [];
  const { f, sender, job } = await setup({
    async send(raw) {
      sent.push(raw);
      return { messageId: `m-${sent.length}` };
    },
  });
  await putWallet(f.store, { label: 'Acme\r\nBcc: thief@evil.example' });
  const named = await f.supported.create(scope, draftFromSdJwt({ id: 'Member', vct: 'urn:member', claims: { given_name: { value_type: 'string' } }, display: [{ locale: 'en' }, { name: 'Membership card' }] }));
  expect(await sender.run({ ...job, supported_cred_id: named.supported_cred_id }, 1)).toBe('sent');
  const first = await simpleParser(sent[0]!);
  expect(first.subject).toBe('Acme Bcc: thief@evil.example offers you a Membership card');
  expect(first.bcc).toBeUndefined();

  await putWallet(f.store, { label: undefined });
  expect(await sender.run({ ...job, request_id: 'req-2' }, 1)).toBe('sent');
  expect((await simpleParser(sent[1]!)).subject).toBe('Wallet 7 offers you a Pid');
});

describe('claiming a recipient, and what is recorded', () => {
  const recordKey = emailKeys.record(scope, 'req-1', 0);
  const accepting = (sent: Buffer[] = []): Mailer => ({
    async send(raw) {
      sent.push(raw);
      return { messageId: `m-${sent.length}` };
    },
  });

  test('a claim is held for 90 s: a second delivery up to then skips, one after it (the first worker died) mails', async () => {
    let now = Date.parse('2026-03-01T10:00:00Z');
    const sent: Buffer[] = [];
    let first = true;
    let dying!: () => void;
    const died = new Promise<void>((r) => (dying = r));
    const { sender, job } = await setup(
      {
        async send(raw) {
          // The first worker dies while sending: its promise never settles, its claim stays.
          if (first) {
            first = false;
            dying();
            return new Promise(() => undefined);
          }
          sent.push(raw);
          return { messageId: 'm-2' };
        },
      },
      { now: () => new Date(now) },
    );
    void sender.run(job, 1);
    await died;
    now += 90_000;
    expect(await sender.run(job, 2)).toBe('skipped');
    now += 1;
    expect(await sender.run(job, 3)).toBe('sent');
    expect(sent).toHaveLength(1);
  });

  test('a store error on the claim is not "claimed by another": the delivery fails, so SQS retries it', async () => {
    const sent: Buffer[] = [];
    const { f, sender, job } = await setup(accepting(sent));
    const write = f.store.write.bind(f.store);
    let calls = 0;
    f.store.write = async (ops) => (++calls === 1 ? Promise.reject(new Error('ProvisionedThroughputExceededException')) : write(ops));
    await expect(sender.run(job, 1)).rejects.toThrow('ProvisionedThroughputExceededException');
    expect(sent).toHaveLength(0);
    expect(await sender.run(job, 2)).toBe('sent');
    expect(sent).toHaveLength(1);
  });

  test('a finished recipient is never claimed again, sent or failed', async () => {
    const sent: Buffer[] = [];
    const { f, sender, job } = await setup(accepting(sent));
    expect(await sender.run(job, 1)).toBe('sent');
    expect((await f.store.get(recordKey))!.lease_until).toBe(FINAL);
    const rejected = await setup({
      async send() {
        throw new MailerRejectedError('MessageRejected');
      },
    });
    expect(await rejected.sender.run(rejected.job, 1)).toBe('failed');
    expect((await rejected.f.store.get(recordKey))!.lease_until).toBe(FINAL);
  });

  test('a record finished without a lease (written before leases existed) is skipped too: nobody is mailed twice', async () => {
    for (const state of ['sent', 'failed']) {
      const sent: Buffer[] = [];
      const { f, sender, job } = await setup(accepting(sent));
      await f.store.write([{ type: 'put', item: { ...recordKey, type: 'email', request_id: 'req-1', index: 0, email: job.email, state, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' } }]);
      expect(await sender.run(job, 1)).toBe('skipped');
      expect(sent).toHaveLength(0);
      expect((await f.store.get(recordKey))!.state).toBe(state);
    }
  });

  test('the events carry the record as the API lists it', async () => {
    const { f, sender, job } = await setup(accepting());
    expect(await sender.run(job, 1)).toBe('sent');
    const sentRecord = emailRecordView((await f.store.get(recordKey))!);
    expect(sentRecord).toMatchObject({ state: 'sent', email: 'ada@example.org', exchange_id: expect.any(String) });
    expect(f.events('email.sent').map((e) => e.data)).toEqual([sentRecord]);

    const rejected = await setup({
      async send() {
        throw new MailerRejectedError('MessageRejected: Email address is not verified.');
      },
    });
    expect(await rejected.sender.run(rejected.job, 1)).toBe('failed');
    const failedRecord = emailRecordView((await rejected.f.store.get(recordKey))!);
    expect(failedRecord).toMatchObject({ state: 'failed', failure_reason: 'mail_rejected', failure_details: [{ path: '', message: 'MessageRejected: Email address is not verified.' }] });
    expect(rejected.f.events('email.failed').map((e) => e.data)).toEqual([failedRecord]);
  });

  test('an offer the service refuses (the configuration deleted meanwhile) is final: no mail, offer_refused; a 5xx (500 too) is retried', async () => {
    const sent: Buffer[] = [];
    const { f, sender, job } = await setup(accepting(sent));
    await f.store.write([{ type: 'delete', key: oid4vciKeys.supported(scope, job.supported_cred_id) }]);
    expect(await sender.run(job, 1)).toBe('failed');
    const record = emailRecordView((await f.store.get(recordKey))!);
    expect(record).toMatchObject({ state: 'failed', failure_reason: 'offer_refused', exchange_id: null });
    expect(record.failure_details[0]!.message).toContain(job.supported_cred_id);
    expect(sent).toHaveLength(0);
    expect(f.events('email.failed')).toHaveLength(1);

    const other = await setup(accepting(sent));
    const issue = other.f.exchanges.issue.bind(other.f.exchanges);
    let calls = 0;
    other.f.exchanges.issue = async (...args) => (++calls === 1 ? Promise.reject(new AppError(500, 'internal', 'The store is unavailable')) : issue(...args));
    await expect(other.sender.run(other.job, 1)).rejects.toThrow('The store is unavailable');
    expect((await other.f.store.get(recordKey))!.state).toBe('sending');
    expect(await other.sender.run(other.job, 2)).toBe('sent');
  });

  test('the mail says when the offer expires: expires_in after the mail is made', async () => {
    const sent: Buffer[] = [];
    const { sender, job } = await setup(accepting(sent), { now: () => new Date('2026-03-01T10:00:00Z') });
    expect(await sender.run({ ...job, expires_in: 3600 }, 1)).toBe('sent');
    expect((await simpleParser(sent[0]!)).text).toContain('The offer expires on 1 March 2026 at 11:00 UTC (2026-03-01T11:00:00.000Z).');
  });

  test('a configuration deleted after the offer was made: the mail calls it a credential', async () => {
    const sent: Buffer[] = [];
    const { f, sender, job } = await setup(accepting(sent));
    const issue = f.exchanges.issue.bind(f.exchanges);
    f.exchanges.issue = async (...args) => {
      const out = await issue(...args);
      await f.store.write([{ type: 'delete', key: oid4vciKeys.supported(scope, job.supported_cred_id) }]);
      return out;
    };
    expect(await sender.run(job, 1)).toBe('sent');
    expect((await simpleParser(sent[0]!)).subject).toBe('Acme offers you a credential');
  });

  describe('reads of the recipient are strongly consistent: a lagging replica changes nothing', () => {
    /** Email records lag on a read that does not ask for consistency (test/helpers/store-hooks.ts). */
    const lagging = (f: { store: ItemStore }) => laggingReads(f.store, (key) => String(key.SK).startsWith('EML#'));

    test('a retry deletes the earlier attempt’s offer and keeps created_at', async () => {
      let now = Date.parse('2026-03-01T10:00:00Z');
      let calls = 0;
      const { f, sender, job } = await setup(
        {
          async send() {
            if (++calls <= 4) throw new MailerThrottledError('Throttling');
            return { messageId: 'm-1' };
          },
        },
        { now: () => new Date(now) },
      );
      const read = lagging(f);
      await expect(sender.run(job, 1)).rejects.toBeInstanceOf(MailerThrottledError);
      const first = (await read(recordKey))!;
      now += 60_000;
      expect(await sender.run(job, 2)).toBe('sent');
      const record = (await read(recordKey))!;
      expect(record.created_at).toBe('2026-03-01T10:00:00.000Z');
      expect(record.exchange_id).not.toBe(first.exchange_id);
      expect(await f.store.get(oid4vciKeys.exchange(scope, String(first.exchange_id)))).toBeUndefined();
    });

    test('the last receive records the failure with its offer (deleted) and the error', async () => {
      const { f, sender, job } = await setup({
        async send() {
          throw new MailerThrottledError('Throttling: Daily message quota exceeded.');
        },
      });
      const read = lagging(f);
      await expect(sender.run(job, 5)).rejects.toBeInstanceOf(MailerThrottledError);
      const record = emailRecordView((await read(recordKey))!);
      expect(record).toMatchObject({ state: 'failed', failure_reason: 'mail_undeliverable', failure_details: [{ path: '', message: 'Throttling: Daily message quota exceeded.' }], exchange_id: expect.any(String) });
      expect(await f.store.get(oid4vciKeys.exchange(scope, record.exchange_id!))).toBeUndefined();
      expect(f.events('email.failed').map((e) => e.data)).toEqual([record]);
    });
  });

  test('the last receive, when the failure was recorded but its write answered with an error: recorded once, one event', async () => {
    const { f, sender, job } = await setup({
      async send() {
        throw new MailerRejectedError('MessageRejected');
      },
    });
    const write = f.store.write.bind(f.store);
    // The transaction commits, then the client sees a timeout (DynamoDB can answer so after committing).
    f.store.write = async (ops) => {
      await write(ops);
      if (ops.some((op) => op.type === 'put' && op.item.state === 'failed')) throw new Error('socket timeout');
    };
    await expect(sender.run(job, 5)).rejects.toThrow('socket timeout');
    expect((await f.store.get(recordKey))!).toMatchObject({ state: 'failed', failure_reason: 'mail_rejected' });
    expect(f.events('email.failed')).toHaveLength(1);
  });

  test('a failure that is not an Error is recorded with a plain message', async () => {
    const { f, sender, job } = await setup({
      async send() {
        throw 'SES said no';
      },
    });
    await expect(sender.run(job, 5)).rejects.toBe('SES said no');
    expect(emailRecordView((await f.store.get(recordKey))!)).toMatchObject({ failure_reason: 'mail_undeliverable', failure_details: [{ path: '', message: 'the mail could not be sent' }] });
  });
});
