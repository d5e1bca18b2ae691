import { jest } from '@jest/globals';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import {
  AccountSendingPausedException,
  ConfigurationSetDoesNotExistException,
  ConfigurationSetSendingPausedException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  SendRawEmailCommand,
  SESClient,
  SESServiceException,
} from '@aws-sdk/client-ses';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';
import { SesMailer } from '../../lib/adapters/ses-mailer';
import { MailerRejectedError, MailerThrottledError, sendWithBackoff } from '../../lib/email/mailer';
import { composeOfferEmail } from '../../lib/email/offer-message';
import { LOOPBACK, startSes, type Emulator } from '../../infra/local/emulators';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const offer = {
  to: 'holder-ses@example.org',
  from: 'offers@issuer.example',
  issuerName: 'Acme Wallet',
  credentialName: 'Employee Badge',
  offerUri: 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Fw%2F3%2Foffers%2F01J9Z',
  expiresAt: new Date('2026-12-01T10:30:00Z'),
};

/** What the emulator's GET /store answers (the fields used here). */
interface StoredEmail {
  messageId: string;
  from: string;
  destination: { to: string[] };
  subject: string;
  body: { text?: string; html?: string };
  attachments: { contentType: string }[];
}

describe('SesMailer against the SES emulator', () => {
  let ses: Emulator;
  let smtpRelay: string | undefined;
  beforeAll(async () => {
    // The emulator relays what it stores to SMTP_TRANSPORT when set; nothing here leaves the machine.
    smtpRelay = process.env.SMTP_TRANSPORT;
    delete process.env.SMTP_TRANSPORT;
    ses = await startSes();
  });
  afterAll(async () => {
    await ses.stop();
    if (smtpRelay !== undefined) process.env.SMTP_TRANSPORT = smtpRelay;
  });

  test('a composed offer email arrives once, to the recipient, with its subject and QR code', async () => {
    const mailer = new SesMailer(new SESClient({ region: 'us-east-1', endpoint: ses.endpoint, credentials }), { configurationSet: 'offers' });
    const { messageId } = await mailer.send(await composeOfferEmail(offer));
    expect(messageId).toBeTruthy();

    const res = await fetch(`${ses.endpoint}/store`);
    expect(res.status).toBe(200);
    const { emails } = (await res.json()) as { emails: StoredEmail[] };
    const mine = emails.filter((e) => e.destination.to.includes(offer.to));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ messageId, from: offer.from, subject: 'Acme Wallet offers you a Employee Badge' });
    expect(mine[0]!.body.text).toContain(offer.offerUri);
    expect(mine[0]!.attachments.map((a) => a.contentType)).toEqual(['image/png']);
  });
});

/** A fake SES on loopback answering every request with one query-protocol error. */
async function sesAnswering(status: number, code: string, message: string): Promise<{ endpoint: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'text/xml' });
      res.end(`<ErrorResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`);
    });
  });
  server.listen(0, LOOPBACK);
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { endpoint: `http://${LOOPBACK}:${port}`, requests: () => requests, close: () => new Promise((r) => server.close(() => r())) };
}

describe('SesMailer error mapping', () => {
  test('throttling as SES sends it (code Throttling, HTTP 400, unmodeled in the SDK) is MailerThrottledError', async () => {
    const fake = await sesAnswering(400, 'Throttling', 'Maximum sending rate exceeded.');
    try {
      // One attempt: the SDK's own retry would otherwise resend twice before we see the error.
      const mailer = new SesMailer(new SESClient({ region: 'us-east-1', endpoint: fake.endpoint, credentials, maxAttempts: 1 }));
      const err = await mailer.send(Buffer.from('Subject: x\r\n\r\nx')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MailerThrottledError);
      expect((err as Error).message).toContain('Maximum sending rate exceeded.');
      // What the name check rests on: a bare service exception named after the code, no $retryable.
      const cause = (err as Error).cause as SESServiceException;
      expect(cause).toBeInstanceOf(SESServiceException);
      expect(cause).toMatchObject({ name: 'Throttling', $retryable: undefined, $metadata: { httpStatusCode: 400 } });
      expect(fake.requests()).toBe(1);
    } finally {
      await fake.close();
    }
  });

  describe('with aws-sdk-client-mock', () => {
    let sesMock: AwsClientStub<SESClient>;
    // Created per test and restored: the stub replaces send() on every SESClient, the emulator's too.
    beforeEach(() => {
      sesMock = mockClient(SESClient);
    });
    afterEach(() => {
      sesMock.restore();
      jest.restoreAllMocks();
    });

    const mailer = (opts?: { configurationSet?: string }) => new SesMailer(new SESClient({ region: 'us-east-1', credentials }), opts);
    const raw = Buffer.from('From: a@example.org\r\nTo: b@example.org\r\nSubject: x\r\n\r\nx');
    const meta = { $metadata: { httpStatusCode: 400 } };
    const throttling = () => new SESServiceException({ name: 'Throttling', $fault: 'client', message: 'Maximum sending rate exceeded.', ...meta });

    test('sends the raw message, with the configuration set only when configured', async () => {
      sesMock.on(SendRawEmailCommand).resolves({ MessageId: 'm-1' });
      await expect(mailer({ configurationSet: 'offers' }).send(raw)).resolves.toEqual({ messageId: 'm-1' });
      await expect(mailer().send(raw)).resolves.toEqual({ messageId: 'm-1' });
      const [withSet, without] = sesMock.commandCalls(SendRawEmailCommand).map((c) => c.args[0].input);
      expect(withSet).toEqual({ RawMessage: { Data: raw }, ConfigurationSetName: 'offers' });
      expect(without).toEqual({ RawMessage: { Data: raw } });
    });

    test.each([
      ['Throttling', throttling],
      ['TooManyRequestsException', () => new SESServiceException({ name: 'TooManyRequestsException', $fault: 'client', message: 'slow down', $metadata: { httpStatusCode: 429 } })],
    ])('%s is MailerThrottledError', async (_, error) => {
      sesMock.on(SendRawEmailCommand).rejects(error());
      await expect(mailer().send(raw)).rejects.toBeInstanceOf(MailerThrottledError);
    });

    test.each([
      ['MessageRejected', () => new MessageRejected({ message: 'Email address is not verified.', ...meta })],
      ['MailFromDomainNotVerifiedException', () => new MailFromDomainNotVerifiedException({ message: 'no MX', ...meta })],
      ['ConfigurationSetDoesNotExistException', () => new ConfigurationSetDoesNotExistException({ message: 'no such set', ...meta })],
      ['ConfigurationSetSendingPausedException', () => new ConfigurationSetSendingPausedException({ message: 'paused', ...meta })],
      ['AccountSendingPausedException', () => new AccountSendingPausedException({ message: 'paused', ...meta })],
      ['InvalidParameterValue', () => new SESServiceException({ name: 'InvalidParameterValue', $fault: 'client', message: "Missing final '@domain'", ...meta })],
    ])('%s is MailerRejectedError, naming the cause', async (name, error) => {
      const thrown = error();
      sesMock.on(SendRawEmailCommand).rejects(thrown);
      const err = await mailer().send(raw).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MailerRejectedError);
      expect((err as Error).message).toContain(name);
      expect((err as Error).cause).toBe(thrown);
    });

    test('a network error and an SES server fault pass through as they are', async () => {
      const network = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' });
      sesMock.on(SendRawEmailCommand).rejects(network);
      await expect(mailer().send(raw)).rejects.toBe(network);
      const internal = new SESServiceException({ name: 'InternalFailure', $fault: 'server', message: 'oops', $metadata: { httpStatusCode: 500 } });
      sesMock.on(SendRawEmailCommand).rejects(internal);
      await expect(mailer().send(raw)).rejects.toBe(internal);
    });

    describe('sendWithBackoff', () => {
      const recorder = () => {
        const waits: number[] = [];
        return { waits, sleep: async (ms: number) => void waits.push(ms) };
      };

      test('two throttles then success: three sends, waits drawn under a doubling bound', async () => {
        sesMock.on(SendRawEmailCommand).rejectsOnce(throttling()).rejectsOnce(throttling()).resolves({ MessageId: 'm-3' });
        jest.spyOn(Math, 'random').mockReturnValue(0.5);
        const { waits, sleep } = recorder();
        await expect(sendWithBackoff(mailer(), raw, { sleep })).resolves.toEqual({ messageId: 'm-3' });
        expect(sesMock.commandCalls(SendRawEmailCommand)).toHaveLength(3);
        // Full jitter: random × 200·2^n, so half of 200 then half of 400.
        expect(waits).toEqual([100, 200]);
      });

      test('four throttles: four sends, then the last MailerThrottledError', async () => {
        sesMock.on(SendRawEmailCommand).rejects(throttling());
        jest.spyOn(Math, 'random').mockReturnValue(0.999);
        const { waits, sleep } = recorder();
        await expect(sendWithBackoff(mailer(), raw, { sleep, baseMs: 50 })).rejects.toBeInstanceOf(MailerThrottledError);
        expect(sesMock.commandCalls(SendRawEmailCommand)).toHaveLength(4);
        expect(waits).toHaveLength(3);
        [50, 100, 200].forEach((bound, i) => {
          expect(waits[i]).toBeLessThan(bound);
          expect(waits[i]).toBeGreaterThan(bound * 0.99);
        });
      });

      test('a rejection is not retried', async () => {
        sesMock.on(SendRawEmailCommand).rejects(new MessageRejected({ message: 'Email address is not verified.', ...meta }));
        const { waits, sleep } = recorder();
        await expect(sendWithBackoff(mailer(), raw, { sleep })).rejects.toBeInstanceOf(MailerRejectedError);
        expect(sesMock.commandCalls(SendRawEmailCommand)).toHaveLength(1);
        expect(waits).toEqual([]);
      });
    });
  });
});
