import { FairShare } from '../../lib/fairness/share';
import { InboundProcessor, MAX_INBOUND_ATTEMPTS, inboundKey, parseInboundJob, type InboundHandled } from '../../lib/didcomm/inbound';
import { retrySeconds, runInboundBatch, type InboundRecord } from '../../lib/didcomm/inbound-batch';
import { queueDefinition } from '../../lib/service/resources';
import { tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

const ULID = (n: number) => `01J${String(n).padStart(23, '0')}`;
const rec = (wallet: string, group: string, n: number, receiveCount = 1): InboundRecord => ({
  messageId: `m${wallet}-${n}`,
  receiptHandle: `h${wallet}-${n}`,
  groupId: group,
  receiveCount,
  job: { wallet_id: wallet, inbound_id: ULID(n) },
});

function harness(opts: { perTenant?: number; fail?: (id: string) => boolean; store?: MemoryStore } = {}) {
  const fairness = { ...queueDefinition('didcomm-inbound').fairness, ...(opts.perTenant ? { perTenant: opts.perTenant } : {}) };
  const share = new FairShare({ store: opts.store ?? new MemoryStore(), name: 'didcomm-inbound', fairness });
  const ran: string[] = [];
  const later: { receiptHandle: string; seconds: number }[][] = [];
  const deferred: string[] = [];
  const junk: string[] = [];
  const deps = {
    share,
    processor: {
      process: async (_scope: unknown, id: string): Promise<InboundHandled> => {
        ran.push(id);
        if (opts.fail?.(id)) throw new Error(`boom ${id}`);
        return { kind: 'gone' };
      },
    },
    redelivery: { later: async (e: readonly { receiptHandle: string; seconds: number }[]) => void later.push([...e]) },
    onHandled: () => undefined,
    onFailed: () => undefined,
    onDeferred: (w: string) => void deferred.push(w),
    onJunk: (r: InboundRecord) => void junk.push(r.messageId),
    onRedeliveryError: () => undefined,
  };
  return { deps, share, ran, later, deferred, junk };
}

test('a group runs in order; a failure gives back that message and the rest of its group only, after a short delay', async () => {
  const h = harness({ fail: (id) => id === ULID(2) });
  const records = [rec('1', 'g1', 1), rec('1', 'g1', 2), rec('1', 'g2', 4), rec('1', 'g1', 3), rec('1', 'g2', 5)];
  const failed = await runInboundBatch(records, h.deps);
  // g1: 1 ran, 2 failed, 3 not run; g2 ran in order.
  expect(h.ran).toEqual([ULID(1), ULID(2), ULID(4), ULID(5)]);
  expect(failed).toEqual(['m1-2', 'm1-3']);
  expect(h.later).toEqual([[{ receiptHandle: 'h1-2', seconds: retrySeconds(1) }, { receiptHandle: 'h1-3', seconds: retrySeconds(1) }]]);
});

test('a wallet at its cap has all its messages given back without running any; other wallets run', async () => {
  const store = new MemoryStore();
  const h = harness({ perTenant: 1, store });
  // Wallet 7's only place is taken by another instance.
  const busy = await h.share.admit(tenantScope('7'));
  expect('pass' in busy).toBe(true);
  const failed = await runInboundBatch([rec('7', 'a', 1), rec('8', 'b', 2), rec('7', 'c', 3, 3)], h.deps);
  expect(h.ran).toEqual([ULID(2)]);
  expect(failed.sort()).toEqual(['m7-1', 'm7-3']);
  expect(h.deferred).toEqual(['7']);
  const seconds = h.later[0]!.map((e) => e.seconds);
  expect(seconds[0]).toBe(seconds[1]);
  expect(seconds[0]).toBeGreaterThanOrEqual(1);
  expect(seconds[0]).toBeLessThanOrEqual(queueDefinition('didcomm-inbound').fairness.defer.maxSeconds * 1.25);
});

test("a wallet whose counter cannot be reached is deferred whole, nothing run; a failing report or visibility change changes no message's fate", async () => {
  const h = harness();
  const realAdmit = h.share.run.bind(h.share);
  h.share.run = (async (scope: { walletId: string }, work: () => Promise<unknown>) => {
    if (scope.walletId === '5') throw new Error('DynamoDB unreachable');
    return realAdmit(scope as never, work as never);
  }) as never;
  const deps = { ...h.deps, onHandled: () => { throw new Error('logger down'); }, redelivery: { later: async () => Promise.reject(new Error('SQS down')) }, onDeferred: (w: string, _n: number, refusal: string) => void h.deferred.push(`${w}:${refusal}`) };
  const failed = await runInboundBatch([rec('5', 'a', 1), rec('6', 'b', 2), rec('5', 'a', 3)], deps);
  expect(h.ran).toEqual([ULID(2)]);
  expect(failed.sort()).toEqual(['m5-1', 'm5-3']);
  expect(h.deferred).toEqual(['5:unreachable']);
});

test('a message that is not an inbound job is dropped, not retried', async () => {
  const h = harness();
  const bad = { ...rec('1', 'g', 1), job: parseInboundJob('{"wallet_id":"1","inbound_id":"../x"}') };
  expect(bad.job).toBeNull();
  expect(parseInboundJob('not json')).toBeNull();
  expect(parseInboundJob(JSON.stringify({ wallet_id: '01', inbound_id: ULID(1) }))).toBeNull();
  expect(await runInboundBatch([bad], h.deps)).toEqual([]);
  expect(h.junk).toEqual(['m1-1']);
  expect(h.ran).toEqual([]);
});

describe('InboundProcessor', () => {
  const A = tenantScope('3');
  const stored = (store: MemoryStore, id: string) =>
    store.write([{ type: 'put', item: { ...inboundKey(A, id), envelope: '{"x":1}', recipient: 'vk1', endpoint: 'https://e/didcomm/r', attempts: 0 } }]);

  test('hands the envelope to the agent with its endpoint and the recipient key the endpoint found, then removes it; a second delivery finds it gone', async () => {
    const store = new MemoryStore();
    await stored(store, ULID(1));
    const seen: unknown[] = [];
    const p = new InboundProcessor(store, { receive: async (_s, endpoint, envelope, recipient) => (seen.push([endpoint, envelope, recipient]), { kind: 'dropped', reason: 'not_for_us', detail: '' }) });
    expect(await p.process(A, ULID(1))).toEqual({ kind: 'handled', outcome: { kind: 'dropped', reason: 'not_for_us', detail: '' } });
    expect(seen).toEqual([['https://e/didcomm/r', { x: 1 }, 'vk1']]);
    expect(await store.get(inboundKey(A, ULID(1)))).toBeUndefined();
    expect(await p.process(A, ULID(1))).toEqual({ kind: 'gone' });
  });

  test(`a failure of ours is counted and thrown (tried again); after ${MAX_INBOUND_ATTEMPTS} the envelope is given up and removed`, async () => {
    const store = new MemoryStore();
    await stored(store, ULID(2));
    const p = new InboundProcessor(store, { receive: async () => Promise.reject(new Error('KMS unavailable')) });
    for (let i = 1; i < MAX_INBOUND_ATTEMPTS; i++) {
      await expect(p.process(A, ULID(2))).rejects.toThrow('KMS unavailable');
      expect((await store.get(inboundKey(A, ULID(2))))?.attempts).toBe(i);
    }
    expect(await p.process(A, ULID(2))).toEqual({ kind: 'given_up', attempts: MAX_INBOUND_ATTEMPTS, error: 'KMS unavailable' });
    expect(await store.get(inboundKey(A, ULID(2)))).toBeUndefined();
  });
});
