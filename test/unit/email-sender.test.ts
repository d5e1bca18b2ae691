import { simpleParser } from 'mailparser';
import { MailerRejectedError, MailerThrottledError, type Mailer } from '../../lib/email/mailer';
import { emailKeys, type EmailJob } from '../../lib/email/bulk';
import { OfferMailer } from '../../lib/email/sender';
import { draftFromSdJwt } from '../../lib/oid4vci/supported';
import { oid4vciFixture, putWallet, scope, BASE } from '../helpers/oid4vci-fixture';

/** The email worker's work for one recipient, in-process: one offer, one mail, the outcome recorded once. */

async function setup(mailer: Mailer) {
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
