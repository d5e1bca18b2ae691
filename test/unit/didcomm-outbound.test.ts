import { AgentRuntime, type SendResult } from '../../lib/didcomm/agent-runtime';
import { MemoryVault } from '../helpers/didcomm-memory-vault';
import { PEER_DIDS, type Outbound } from '../../lib/didcomm/agent';
import { unpackMessage } from '../../lib/didcomm/envelope';
import { MAX_OUTBOUND_JOB_BYTES, outboundJobFromOutboxItem, outboundJobWrites, OutboundTooLargeError, parseOutboundJob, type OutboundJob } from '../../lib/didcomm/outbound';
import { OutboundSender, outboundVerdict } from '../../lib/didcomm/outbound-sender';
import { InvitationService } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { didcommKeys, storedConnectionFromItem, type StoredConnection } from '../../lib/didcomm/records';
import { SendingService } from '../../lib/didcomm/sending';
import { OutboxPublisher } from '../../lib/events/publisher';
import { FairShare } from '../../lib/fairness/share';
import { queueDefinition } from '../../lib/service/resources';
import { keys, tenantScope, type TenantScope } from '../../lib/store/keys';
import type { Item } from '../../lib/store/port';
import type { AttemptOutcome } from '../../lib/webhooks/retry-policy';
import type { WebhookRequest } from '../../lib/webhooks/transport';
import { MemoryStore } from '../helpers/memory-store';

/**
 * The outbound path in process: which jobs a committed decision carries (and that a refused one
 * carries none), what an attempt's outcome decides, and the two sending routes' rules.
 */
const BASE = 'https://agent.example.test';
const A = tenantScope('1');
const B = tenantScope('2');
const endpointOf = (s: TenantScope) => `${BASE}/didcomm/ref${s.walletId}`;


function setup(answer: () => AttemptOutcome = () => ({ kind: 'response', status: 202 })) {
  const store = new MemoryStore();
  const vault = new MemoryVault();
  const events = new OutboxPublisher(store);
  const posted: WebhookRequest[] = [];
  const transport = {
    post: async (r: WebhookRequest) => {
      posted.push(r);
      return { outcome: answer(), durationMs: 3 };
    },
  };
  let now = new Date('2026-11-26T00:00:00Z');
  const agent = new AgentRuntime({ store, events, keys: vault, dids: PEER_DIDS, transport, maxEnvelopeBytes: 256 * 1024, timeoutMs: 1000, now: () => now });
  const invitations = new InvitationService({ store, events, refs: { of: async (s) => `ref${s.walletId}` }, keys: vault });
  const queued: { body: string; delaySeconds: number; group: string }[] = [];
  const queue = { send: async (m: readonly { body: string; delaySeconds: number; group: string }[]) => void queued.push(...m) };
  const jobs = (s: TenantScope) => [...store.items.values()].filter((i) => i.PK === keys.walletPartition(s) && String(i.SK).startsWith('JOBQ#DCOUT#')).map((i) => outboundJobFromOutboxItem(i)!);
  const eventTypes = (s: TenantScope) => [...store.items.values()].filter((i) => i.PK === keys.walletPartition(s) && String(i.SK).startsWith('EVT#')).map((i) => (i.event as { type: string }).type);
  const stored = async (s: TenantScope, id: string): Promise<StoredConnection> => storedConnectionFromItem((await store.get(didcommKeys.connection(s, id)))!);
  /** Delivers each job's envelope to the wallet it is for, and their answers' jobs, until quiet (what the workers do deployed). */
  async function deliver(pending: OutboundJob[]) {
    while (pending.length > 0) {
      const job = pending.shift()!;
      const before = posted.length;
      expect(await agent.send(tenantScope(job.wallet_id), { connectionId: job.connection_id, senderVerkey: job.sender_verkey, to: { endpoint: job.to.endpoint, recipientKeys: job.to.recipient_keys, routingKeys: job.to.routing_keys }, message: job.message })).toMatchObject({ ok: true });
      for (const req of posted.slice(before)) {
        const to = [A, B].find((s) => req.url === endpointOf(s))!;
        const seen = new Set(jobs(to).map((j) => j.job_id));
        const outcome = await agent.receive(to, endpointOf(to), JSON.parse(req.body));
        expect(outcome.kind).toBe('committed');
        pending.push(...jobs(to).filter((j) => !seen.has(j.job_id)));
      }
    }
  }
  const sender = (opts: { retry?: number[]; fairness?: FairShare } = {}) =>
    new OutboundSender({ runtime: agent, store, queue, retryDelaysSeconds: opts.retry ?? [10, 20], ...(opts.fairness ? { fairness: opts.fairness } : {}), now: () => now, random: () => 0.5 });
  return { store, vault, agent, invitations, posted, queued, jobs, eventTypes, stored, deliver, sender, tick: (ms: number) => (now = new Date(now.getTime() + ms)), sending: new SendingService({ store, runtime: agent, refs: { of: async (s) => `ref${s.walletId}` } }) };
}

/** A connects to B's invitation: every message carried by the jobs the decisions wrote. */
async function connect(t: ReturnType<typeof setup>, opts: { multi_use?: boolean } = {}, who: TenantScope = B) {
  const inv = await t.invitations.create(A, { label: 'Alice', ...opts }, BASE);
  const seen = new Set(t.jobs(who).map((j) => j.job_id));
  const accepted = await t.agent.acceptInvitation(who, endpointOf(who), inv.invitation, { label: 'Bob', alias: null });
  await t.deliver(t.jobs(who).filter((j) => !seen.has(j.job_id)));
  return { inv, connection: accepted.connection };
}

test("each message a decision sends is an outbox job in the decision's own transaction, carrying what the sender needs", async () => {
  const t = setup();
  const inv = await t.invitations.create(A, {}, BASE);
  const accepted = await t.agent.acceptInvitation(B, endpointOf(B), inv.invitation, { label: 'Bob', alias: null });
  const [job] = t.jobs(B);
  expect(t.jobs(B)).toHaveLength(1);
  expect(job).toMatchObject({
    v: 1,
    wallet_id: '2',
    connection_id: accepted.connection.connection_id,
    sender_verkey: accepted.connection.my_verkey,
    to: { endpoint: endpointOf(A), recipient_keys: [(await t.invitations.get(A, inv.invitation_id)).invitation_key], routing_keys: [] },
    message: accepted.outbound[0]!.message,
    attempt: 1,
  });
  expect(job!.message_id).toBeUndefined();
  // The outbox item is relayed from the stream: the job's own key, a TTL, and the wallet's partition.
  const item = [...t.store.items.values()].find((i) => String(i.SK) === `JOBQ#DCOUT#${job!.job_id}`)!;
  expect(item).toMatchObject({ PK: 'W#2', type: 'didcomm_outbound', ttl: expect.any(Number) });
  expect(parseOutboundJob(JSON.stringify(job))).toEqual(job);
  expect(parseOutboundJob('{"v":1}')).toBeNull();
  expect(parseOutboundJob('not json')).toBeNull();

  // The answers (response, complete) are jobs of the decisions that received them, in each wallet.
  await t.deliver([job!]);
  expect(t.jobs(A).map((j) => j.message['@type'])).toEqual(['https://didcomm.org/didexchange/1.1/response']);
  expect(t.jobs(B).map((j) => j.message['@type'])).toEqual(['https://didcomm.org/didexchange/1.1/request', 'https://didcomm.org/didexchange/1.1/complete']);
});

test('a basic message is stored queued with its job (message_id set); a connection that left active refuses both', async () => {
  const t = setup();
  const { connection } = await connect(t);
  const c = await t.stored(B, connection.connection_id);
  const sent = await t.agent.sendMessage(B, endpointOf(B), c, 'hello');
  const job = t.jobs(B).find((j) => j.message_id === sent.message.message_id)!;
  expect(job.message).toMatchObject({ '@type': 'https://didcomm.org/basicmessage/1.0/message', content: 'hello' });
  expect(sent.message.state).toBe('queued');

  // Read active, abandoned before the write: the transaction refuses the message and its job.
  await t.store.write([{ type: 'update', key: didcommKeys.connection(B, c.connection_id), set: { state: 'error' } }]);
  const size = t.store.items.size;
  await expect(t.agent.sendMessage(B, endpointOf(B), c, 'too late')).rejects.toMatchObject({ name: 'ConditionFailedError' });
  expect(t.store.items.size).toBe(size);
});

test('a job over the SQS bound is refused before anything is written', () => {
  const out: Outbound = { connectionId: 'c', senderVerkey: 'k', to: { endpoint: 'https://x.example', recipientKeys: ['r'], routingKeys: [] }, message: { big: 'x'.repeat(MAX_OUTBOUND_JOB_BYTES) } };
  expect(() => outboundJobWrites(A, [out], new Date())).toThrow(OutboundTooLargeError);
  expect(outboundJobWrites(A, [{ ...out, message: { small: 'x' } }], new Date())).toHaveLength(1);
});

test('what an attempt decides: 2xx sent; 5xx, 408, 429, timeouts and network errors retried while the schedule lasts; other answers and a missing key final', () => {
  const r = (outcome: AttemptOutcome | null, ok = false): SendResult => ({ ok, detail: 'd', outcome, durationMs: 1 });
  const schedule = [10, 20];
  const half = () => 0.5;
  expect(outboundVerdict(r({ kind: 'response', status: 202 }, true), 1, schedule, half)).toEqual({ kind: 'sent' });
  for (const o of [{ kind: 'response', status: 500 }, { kind: 'response', status: 429 }, { kind: 'response', status: 408 }, { kind: 'timeout' }, { kind: 'network', detail: 'ECONNREFUSED' }, { kind: 'refused_address', detail: 'private' }] as AttemptOutcome[]) {
    expect(outboundVerdict(r(o), 1, schedule, half)).toEqual({ kind: 'retry', delaySeconds: 10 });
    expect(outboundVerdict(r(o), 2, schedule, half)).toEqual({ kind: 'retry', delaySeconds: 20 });
    expect(outboundVerdict(r(o), 3, schedule, half)).toMatchObject({ kind: 'failed', reason: expect.stringContaining('retries exhausted after 3 attempts') });
  }
  for (const status of [400, 404, 410, 301]) expect(outboundVerdict(r({ kind: 'response', status }), 1, schedule, half)).toMatchObject({ kind: 'failed', reason: 'final answer: d' });
  expect(outboundVerdict(r(null), 1, schedule, half)).toEqual({ kind: 'failed', reason: 'd' });
});

test('the worker: sent and marked once (message.sent); a failing endpoint is retried with delayed jobs, then the message is failed (message.failed)', async () => {
  let status = 202;
  const t = setup(() => ({ kind: 'response', status }));
  const { connection } = await connect(t);
  const c = await t.stored(B, connection.connection_id);
  const sender = t.sender();

  const ok = await t.agent.sendMessage(B, endpointOf(B), c, 'one');
  const okJob = t.jobs(B).find((j) => j.message_id === ok.message.message_id)!;
  const posts = t.posted.length;
  expect(await sender.run(okJob)).toBe('sent');
  const envelope = JSON.parse(t.posted.at(-1)!.body);
  expect(t.posted.at(-1)!.headers['content-type']).toBe('application/didcomm-envelope-enc');
  // Authcrypted from our connection key to the peer's key (A's key on the connection).
  const aConn = (await t.store.get(didcommKeys.connection(A, String((await t.store.query('W#1', { skBeginsWith: 'DCCONN#' }))[0]!.connection_id))))!;
  const opened = unpackMessage(envelope, (await t.vault.keyPair('1', String(aConn.my_verkey)))!);
  expect(opened).toMatchObject({ senderVerkey: c.my_verkey, message: { content: 'one' } });
  expect((await t.store.get(didcommKeys.message(B, ok.message.message_id)))!.state).toBe('sent');
  // A duplicate of the job does nothing: no post, no second event.
  expect(await sender.run(okJob)).toBe('skipped');
  expect(t.posted.length).toBe(posts + 1);
  expect(t.eventTypes(B).filter((e) => e.startsWith('message.'))).toEqual(['message.sent']);

  status = 503;
  const bad = await t.agent.sendMessage(B, endpointOf(B), c, 'two');
  let job = t.jobs(B).find((j) => j.message_id === bad.message.message_id)!;
  expect(await sender.run(job)).toBe('retry_queued');
  const retry = JSON.parse(t.queued.at(-1)!.body) as OutboundJob;
  expect(retry).toMatchObject({ attempt: 2, job_id: job.job_id, message_id: bad.message.message_id, not_before: expect.any(Number) });
  expect(t.queued.at(-1)).toMatchObject({ delaySeconds: 10, group: 'wallet-2' });
  // Not yet due (a delay past SQS's 15 minutes is chained): queued again without a post.
  const before = t.posted.length;
  expect(await sender.run({ ...retry, not_before: Date.parse('2026-11-26T01:00:00Z') })).toBe('waiting');
  expect(t.posted.length).toBe(before);
  job = retry;
  t.tick(10_000);
  expect(await sender.run(job)).toBe('retry_queued');
  job = JSON.parse(t.queued.at(-1)!.body);
  t.tick(20_000);
  expect(await sender.run(job)).toBe('failed');
  const failed = (await t.store.get(didcommKeys.message(B, bad.message.message_id)))!;
  expect(failed).toMatchObject({ state: 'failed', failure_reason: expect.stringContaining('retries exhausted after 3 attempts: response 503') });
  expect(t.eventTypes(B).filter((e) => e.startsWith('message.'))).toEqual(['message.sent', 'message.failed']);
  // A 4xx is final at once.
  status = 400;
  const refused = await t.agent.sendMessage(B, endpointOf(B), c, 'three');
  expect(await sender.run(t.jobs(B).find((j) => j.message_id === refused.message.message_id)!)).toBe('failed');
});

test("the worker holds a place under the wallet's and the endpoint's caps; over a cap the job is deferred, not attempted", async () => {
  const t = setup();
  const { connection } = await connect(t);
  const c = await t.stored(B, connection.connection_id);
  const fairness = new FairShare({ store: t.store, name: 'didcomm-outbound', fairness: queueDefinition('didcomm-outbound').fairness });
  const sent = await t.agent.sendMessage(B, endpointOf(B), c, 'wait your turn');
  const job = t.jobs(B).find((j) => j.message_id === sent.message.message_id)!;
  // The endpoint's cap (3) taken by other jobs of the wallet.
  const held = [];
  for (let i = 0; i < queueDefinition('didcomm-outbound').fairness.targets!.perTarget; i++) {
    const a = await fairness.admitTo(B, job.to.endpoint);
    expect('pass' in a).toBe(true);
    held.push(a);
  }
  const posts = t.posted.length;
  expect(await t.sender({ fairness }).run(job)).toBe('deferred');
  expect(t.posted.length).toBe(posts);
  expect(JSON.parse(t.queued.at(-1)!.body)).toMatchObject({ attempt: 1, deferrals: 1 });
  for (const a of held) if ('pass' in a) await fairness.release(a.pass);
  expect(await t.sender({ fairness }).run(job)).toBe('sent');
});

test('POST /api/v1/messages by invitation_id: the one connection the invitation produced; a multi-use one with two is refused, not guessed', async () => {
  const t = setup();
  const single = await connect(t, {}, B);
  const aConnections = async () => (await t.store.query('W#1', { skBeginsWith: 'DCCONN#' })) as Item[];
  const first = (await aConnections())[0]!;
  expect(first.state).toBe('active');
  const out = await t.sending.sendMessage(A, { invitation_id: single.inv.invitation_id, message: 'by invitation' }, BASE);
  expect(out.success).toMatch(new RegExp(`^Message \\S+ queued for contact ${String(first.connection_id)}$`));
  // The other wallet's invitation or contact: not found, exactly as a missing one.
  await expect(t.sending.sendMessage(B, { invitation_id: single.inv.invitation_id, message: 'x' }, BASE)).rejects.toMatchObject({ status: 404, code: 'invitation_not_found' });
  await expect(t.sending.sendMessage(B, { contact_id: String(first.connection_id), message: 'x' }, BASE)).rejects.toMatchObject({ status: 404, code: 'contact_not_found' });
  await expect(t.sending.sendMessage(A, { invitation_id: single.inv.invitation_id, contact_id: 'other', message: 'x' }, BASE)).rejects.toMatchObject({ status: 404, code: 'contact_not_found' });

  const multi = await t.invitations.create(A, { multi_use: true }, BASE);
  await expect(t.sending.sendMessage(A, { invitation_id: multi.invitation_id, message: 'x' }, BASE)).rejects.toMatchObject({ status: 409, code: 'no_connection' });
  for (const s of [B, tenantScope('3')]) {
    const accepted = await t.agent.acceptInvitation(s, endpointOf(s), multi.invitation, { label: `w${s.walletId}`, alias: null });
    const before = t.posted.length;
    await t.agent.send(s, accepted.outbound[0]!);
    expect((await t.agent.receive(A, endpointOf(A), JSON.parse(t.posted[before]!.body))).kind).toBe('committed');
  }
  await expect(t.sending.sendMessage(A, { invitation_id: multi.invitation_id, message: 'x' }, BASE)).rejects.toMatchObject({ status: 409, code: 'invitation_ambiguous' });
  // Named by contact_id, a connection of the multi-use invitation that has not completed: not active.
  const pending = (await aConnections()).find((i) => i.invitation_id === multi.invitation_id)!;
  await expect(t.sending.sendMessage(A, { contact_id: String(pending.connection_id), message: 'x' }, BASE)).rejects.toMatchObject({ status: 409, code: 'connection_not_active' });
  await expect(t.sending.sendMessage(A, { contact_id: String(first.connection_id), invitation_id: multi.invitation_id, message: 'x' }, BASE)).rejects.toMatchObject({ status: 400, code: 'target_mismatch' });
});
