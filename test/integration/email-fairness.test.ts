import type { Mailer } from '../../lib/email/mailer';
import { queueDefinition } from '../../lib/service/resources';
import { eventually } from '../helpers/receiver';
import { ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';

/**
 * Fairness on the shared email worker, on the local runtime. Tenant B's bulk request of 120 recipients
 * is being mailed, each mail taking 400 ms more than usual (an injected mailer standing in for a slow,
 * throttled SES); tenant A then asks for one mail. A's mail must go out while B's request has barely
 * started (less than a quarter of it sent), and B must never have more mails in flight than its cap.
 * Without the cap A's message waits behind all of B's on the queue: with one batch at a time it went
 * out after B's 120; with the 5 instances, after B's 12 batches had been taken by them (most of B's
 * mails sent by then).
 */
const EMAIL = queueDefinition('email');
const B_RECIPIENTS = 120;
const B_MAIL_MS = 400;

interface Sent {
  readonly to: string;
  readonly start: number;
  end?: number;
}
const sends: Sent[] = [];
const mailer: Mailer = {
  async send(raw) {
    const to = /^To: *(.+)$/im.exec(raw.toString('utf8'))?.[1]?.trim() ?? '';
    const s: Sent = { to, start: Date.now() };
    sends.push(s);
    if (to.endsWith('@b.example')) await new Promise((r) => setTimeout(r, B_MAIL_MS));
    s.end = Date.now();
    return { messageId: `m-${sends.length}` };
  },
};

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ mailer });
}, 60_000);
afterAll(async () => {
  await api?.rt.stop();
});

async function issuer() {
  const w = await walletWithPublicDid(api, { method: 'key', options: { key_type: 'p256' } });
  await ok(api.call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', { key: w.key, body: { id: 'Member', vct: 'https://example.com/member', claims: { name: {} } } }), 'configuration');
  return w;
}

const entry = (email: string) => ({ email, schema_id: 'Member', time_to_accept: 1, attributes: [{ name: 'name', value: 'N' }] });

/** The most sends open at one moment among `list`. */
function maxOpen(list: readonly Sent[]): number {
  const edges = list.flatMap((s) => [
    [s.start, 1],
    [s.end ?? Date.now(), -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (open += d!));
  return max;
}

test("A's one mail goes out while B's 120-recipient request has barely started; B never has more than its cap in flight", async () => {
  const [a, b] = await Promise.all([issuer(), issuer()]);
  const ofB = () => sends.filter((s) => s.to.endsWith('@b.example'));
  const bBody = { emails: Array.from({ length: B_RECIPIENTS }, (_, i) => entry(`r${i}@b.example`)) };
  const t0 = Date.now();
  const bAnswer = await ok(api.call('POST', '/api/v1/emails/verify', { key: b.key, body: bBody }), 'B verify');
  expect(bAnswer.emailsSuccess).toHaveLength(B_RECIPIENTS);
  await eventually(async () => (ofB().length > 0 ? true : undefined), 30_000, "B's first mail");

  const aSent = Date.now();
  await ok(api.call('POST', '/api/v1/emails/verify', { key: a.key, body: { emails: [entry('one@a.example')] } }), 'A verify');
  const aMail = await eventually(async () => sends.find((s) => s.to === 'one@a.example' && s.end !== undefined), 60_000, "A's mail");
  const bDone = ofB().filter((s) => s.end !== undefined && s.end <= aMail.end!).length;
  console.log(
    `A's mail went out ${aMail.end! - aSent} ms after A's request (B's first mail started ${ofB()[0]!.start - t0} ms after B's request); ` +
      `by then ${bDone} of B's ${B_RECIPIENTS} mails had gone out; B's most mails in flight at once: ${maxOpen(ofB())} (cap ${EMAIL.fairness.perTenant})`,
  );
  expect(bDone).toBeLessThan(B_RECIPIENTS / 4);
  expect(maxOpen(ofB())).toBeLessThanOrEqual(EMAIL.fairness.perTenant);
  // A's record says so, while B's request is still going on.
  const aRecords = await eventually(async () => {
    const list = await ok(api.call('GET', '/api/v1/emails', { key: a.key }), 'A list');
    return list[0]?.state === 'sent' ? list : undefined;
  });
  expect(aRecords).toHaveLength(1);
  const bSent = await ok(api.call('GET', '/api/v1/emails?state=sent', { key: b.key }), 'B list');
  expect(bSent.length).toBeLessThan(B_RECIPIENTS);
}, 120_000);
