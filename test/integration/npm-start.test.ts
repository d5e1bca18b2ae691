import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESClient } from '@aws-sdk/client-ses';
import { freePort } from '../../infra/local/emulators';
import { SesMailer } from '../../lib/adapters/ses-mailer';
import { composeOfferEmail } from '../../lib/email/offer-message';
import { parseBanner } from '../quickstart/local-stack';

/** Drives `npm start`'s entry point as a user would: a process, its output, Ctrl-C, a restart. */
interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly url: string;
}

const dataDir = mkdtempSync(join(tmpdir(), 'cis-local-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function start(env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    // SMTP_TRANSPORT empty: the SES emulator relays mail nowhere; nothing here leaves the machine.
    env: { ...process.env, PORT: String(port), LOCAL_DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'SILENT', SMTP_TRANSPORT: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 120000; // DynamoDB Local's JVM and the handlers load slowly on a loaded machine
  while (!out.includes('Ctrl-C stops everything')) {
    if (child.exitCode !== null) throw new Error(`npm start exited: ${out}`);
    if (Date.now() > deadline) throw new Error(`npm start did not come up: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => out, url: `http://127.0.0.1:${port}` };
}

async function stop(s: Started): Promise<number | null> {
  s.child.kill('SIGINT');
  const [code] = await once(s.child, 'exit');
  return code as number | null;
}

const subwallets = (url: string, key: string) => fetch(`${url}/api/subwallets`, { headers: { 'x-api-key': key } });

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** Mail in the SES emulator's store (what its viewer lists). */
async function mailIds(viewer: string): Promise<string[]> {
  return ((await (await fetch(`${viewer}/store`)).json()) as { emails: { messageId: string }[] }).emails.map((e) => e.messageId);
}

test('first start prints the API URL and a base key once; data, key and mail survive a restart; BASE_API_KEY replaces it', async () => {
  // The mail viewer's port is the one configured, at every start.
  const mailViewerPort = await freePort();
  const viewer = `http://127.0.0.1:${mailViewerPort}`;
  const first = await start({ MAIL_VIEWER_PORT: String(mailViewerPort) });
  expect(first.output()).toContain(`listening on ${first.url}`);
  expect(first.output()).toContain('x-api-key');
  expect(first.output()).toMatch(new RegExp(`Mail viewer \\(SES\\):\\s+${viewer}\\s`));
  const key = /\b(cisk_[0-9A-Za-z]{49})\b/.exec(first.output())?.[1];
  expect(key).toBeDefined();
  // The banner's export line carries both values the README's Quick start starts from.
  expect(parseBanner(first.output())).toEqual({ baseUrl: first.url, baseApiKey: key, mailViewerUrl: viewer });
  const mailer = new SesMailer(new SESClient({ region: 'us-east-1', endpoint: viewer, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } }), {
    configurationSet: 'offers',
  });
  const offer = { to: 'kept@example.org', from: 'offers@issuer.example', issuerName: 'Acme', credentialName: 'Badge', offerUri: 'openid-credential-offer://?x=1', expiresAt: new Date('2030-01-01T00:00:00Z') };
  const { messageId } = await mailer.send(await composeOfferEmail(offer));
  expect(await mailIds(viewer)).toEqual([messageId]);
  const created = await fetch(`${first.url}/api/subwallet/create`, {
    method: 'POST',
    headers: { 'x-api-key': key!, 'content-type': 'application/json' },
    body: JSON.stringify({ wallet_name: 'persisted' }),
  });
  expect(created.status).toBe(200);
  expect(await stop(first)).toBe(0);

  // The plaintext key is nowhere in the data folder.
  for (const f of filesUnder(dataDir)) expect(readFileSync(f).includes(key!)).toBe(false);

  const second = await start({ MAIL_VIEWER_PORT: String(mailViewerPort) });
  expect(second.output()).not.toMatch(/cisk_[0-9A-Za-z]{49}/);
  expect(parseBanner(second.output())).toEqual({ baseUrl: second.url, baseApiKey: null, mailViewerUrl: viewer });
  expect(await mailIds(viewer)).toEqual([messageId]);
  const list = await subwallets(second.url, key!);
  expect(list.status).toBe(200);
  expect(((await list.json()) as { label: string }[]).map((w) => w.label)).toContain('persisted');
  expect(await stop(second)).toBe(0);

  const chosen = 'my-own-local-base-key-0123456789abcdef';
  const third = await start({ BASE_API_KEY: chosen });
  expect((await subwallets(third.url, chosen)).status).toBe(200);
  expect((await subwallets(third.url, key!)).status).toBe(401);
  expect(await stop(third)).toBe(0);
}, 360000);
