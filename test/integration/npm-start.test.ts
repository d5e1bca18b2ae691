import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESClient } from '@aws-sdk/client-ses';
import { SesMailer } from '../../lib/adapters/ses-mailer';
import { composeOfferEmail } from '../../lib/email/offer-message';
import { freePort, LOOPBACK } from '../../infra/local/emulators';
import { startStack, type StartedStack } from '../quickstart/local-stack';

// `npm start` as a newcomer runs it: what the banner prints, the ports it is told, and the mail viewer's
// mail written to the data folder (test/unit/ses-emulator.test.ts restarts the emulator on such a file).
const START_MS = 300_000; // DynamoDB Local's JVM starts slowly on a loaded machine

let dir: string;
let stack: StartedStack | undefined;
afterAll(async () => {
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('npm start: the banner exports BASE_URL and BASE_API_KEY, the mail viewer sits on MAIL_VIEWER_PORT and keeps its mail in the data folder', async () => {
  dir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  const [port, mailViewerPort] = [await freePort(), await freePort()];
  // SMTP_TRANSPORT empty: the emulator relays mail nowhere; nothing here leaves the machine.
  const env = { PORT: String(port), MAIL_VIEWER_PORT: String(mailViewerPort), LOCAL_DATA_DIR: join(dir, 'data'), POWERTOOLS_LOG_LEVEL: 'ERROR', SMTP_TRANSPORT: '' };

  stack = await startStack({ env });
  expect(stack.baseUrl).toBe(`http://${LOOPBACK}:${port}`);
  expect(stack.mailViewerUrl).toBe(`http://${LOOPBACK}:${mailViewerPort}`);
  // The exported key is the base key: it may list subwallets.
  const listed = await fetch(`${stack.baseUrl}/api/subwallets`, { headers: { 'x-api-key': stack.baseApiKey ?? '' } });
  expect(listed.status).toBe(200);
  const mailer = new SesMailer(new SESClient({ region: 'us-east-1', endpoint: stack.mailViewerUrl, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } }), {
    configurationSet: 'offers',
  });
  const offer = { to: 'kept@example.org', from: 'offers@issuer.example', issuerName: 'Acme', credentialName: 'Badge', offerUri: 'openid-credential-offer://?x=1', expiresAt: new Date('2030-01-01T00:00:00Z') };
  const { messageId } = await mailer.send(await composeOfferEmail(offer));
  await stack.stop();
  stack = undefined;

  const kept = JSON.parse(readFileSync(join(dir, 'data', 'mail.json'), 'utf8')) as { messageId: string }[];
  expect(kept.map((e) => e.messageId)).toEqual([messageId]);
}, START_MS);
