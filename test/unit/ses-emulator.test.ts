import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESClient } from '@aws-sdk/client-ses';
import { SesMailer } from '../../lib/adapters/ses-mailer';
import { composeOfferEmail } from '../../lib/email/offer-message';
import { freePort, LOOPBACK, startSes } from '../../infra/local/emulators';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

async function sendOffer(endpoint: string, to: string): Promise<string> {
  const mailer = new SesMailer(new SESClient({ region: 'us-east-1', endpoint, credentials }), { configurationSet: 'offers' });
  const offer = { to, from: 'offers@issuer.example', issuerName: 'Acme', credentialName: 'Badge', offerUri: 'openid-credential-offer://?x=1', expiresAt: new Date('2030-01-01T00:00:00Z') };
  return (await mailer.send(await composeOfferEmail(offer))).messageId;
}

async function stored(endpoint: string): Promise<{ messageId: string; destination: { to: string[] } }[]> {
  return ((await (await fetch(`${endpoint}/store`)).json()) as { emails: { messageId: string; destination: { to: string[] } }[] }).emails;
}

describe('the local SES emulator (mail viewer)', () => {
  let dir: string;
  let smtpRelay: string | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ses-emulator-'));
    // The emulator relays what it stores to SMTP_TRANSPORT when set; nothing here leaves the machine.
    smtpRelay = process.env.SMTP_TRANSPORT;
    delete process.env.SMTP_TRANSPORT;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    if (smtpRelay !== undefined) process.env.SMTP_TRANSPORT = smtpRelay;
  });

  test('listens on the port it is given, and its viewer answers there', async () => {
    const port = await freePort();
    const ses = await startSes({ port });
    try {
      expect(ses.endpoint).toBe(`http://${LOOPBACK}:${port}`);
      const page = await fetch(`http://${LOOPBACK}:${port}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<html/i);
    } finally {
      await ses.stop();
    }
  });

  test('a port in use is refused with a message naming it and MAIL_VIEWER_PORT', async () => {
    const taken = createServer().listen(0, LOOPBACK);
    await once(taken, 'listening');
    const { port } = taken.address() as { port: number };
    try {
      await expect(startSes({ port })).rejects.toThrow(new RegExp(`${LOOPBACK}:${port}.*in use.*MAIL_VIEWER_PORT`));
    } finally {
      taken.close();
    }
  });

  test('with a mail file, mail survives a restart; without one, a restart starts empty', async () => {
    const mailFile = join(dir, 'mail.json');
    const first = await startSes({ mailFile });
    const messageId = await sendOffer(first.endpoint, 'kept@example.org');
    await first.stop();
    expect(statSync(mailFile).mode & 0o777).toBe(0o600); // offers carry pre-authorized codes

    const second = await startSes({ mailFile });
    try {
      expect((await stored(second.endpoint)).map((e) => e.messageId)).toEqual([messageId]);
      // Mail sent now is added to what was kept, in the file too.
      const next = await sendOffer(second.endpoint, 'next@example.org');
      // Written once the response is sent: wait for it, within a bound.
      const inFile = () => (JSON.parse(readFileSync(mailFile, 'utf8')) as { messageId: string }[]).map((e) => e.messageId);
      for (const deadline = Date.now() + 5000; inFile().length < 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
      expect(inFile()).toEqual([messageId, next]);
    } finally {
      await second.stop();
    }

    const memoryOnly = await startSes();
    try {
      expect(await stored(memoryOnly.endpoint)).toEqual([]);
    } finally {
      await memoryOnly.stop();
    }
  });

  test('a mail file that is not a list of mails is refused at start, not overwritten', async () => {
    const mailFile = join(dir, 'broken.json');
    writeFileSync(mailFile, '{"emails": 3}');
    await expect(startSes({ mailFile })).rejects.toThrow(/broken\.json does not hold a JSON array/);
    expect(readFileSync(mailFile, 'utf8')).toBe('{"emails": 3}');
  });
});
