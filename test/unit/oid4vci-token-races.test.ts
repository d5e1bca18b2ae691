import { AsyncLocalStorage } from 'node:async_hooks';
import { DEFAULT_PROTOCOL_SETTINGS } from '../../lib/oid4vci/protocol/service';
import { oid4vciKeys } from '../../lib/oid4vci/records';
import type { ItemKey } from '../../lib/store/port';
import { MemoryStore } from '../helpers/memory-store';
import { oid4vciFixture, scope } from '../helpers/oid4vci-fixture';

/** Which guess a request is making (so the store can note its place in the count). */
const guess = new AsyncLocalStorage<{ pin: string }>();

/** A store whose calls take 5–25 ms each, as DynamoDB's do: concurrent requests interleave in any order. */
class SlowStore extends MemoryStore {
  /** The count each guess's increment returned, by PIN. */
  readonly counted = new Map<string, number>();
  private readonly latency = () => new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
  override async get(key: ItemKey) {
    await this.latency();
    return super.get(key);
  }
  override async write(ops: Parameters<MemoryStore['write']>[0]) {
    await this.latency();
    return super.write(ops);
  }
  override async increment(...args: Parameters<MemoryStore['increment']>) {
    await this.latency();
    const n = await super.increment(...args);
    const pin = guess.getStore()?.pin;
    if (pin !== undefined) this.counted.set(pin, n);
    return n;
  }
}

async function setup() {
  const store = new SlowStore();
  const f = await oid4vciFixture({ store });
  const { code, exchangeId } = await f.offer({ pin: '4711' });
  const token = (txCode: string, headers: Record<string, string> = {}) => f.token(code, { txCode, headers });
  return { store, token, exchange: () => f.exchange(exchangeId), exchangeId, code };
}

describe('PIN guesses one after another', () => {
  const max = DEFAULT_PROTOCOL_SETTINGS.maxTxCodeAttempts;

  test('each wrong PIN is refused and counted; the right one on the last allowed attempt still redeems', async () => {
    const s = await setup();
    for (let i = 1; i < max; i++) {
      await expect(s.token('0000')).rejects.toMatchObject({ code: 'invalid_grant', message: `Invalid tx_code (${max - i} attempt(s) left)` });
      expect(await s.exchange()).toMatchObject({ state: 'offer', tx_code_attempts: i });
    }
    await expect(s.token('4711')).resolves.toMatchObject({ token_type: expect.any(String) });
    expect((await s.exchange()).state).toBe('redeemed');
  });

  test('the last allowed wrong PIN burns the code: the exchange fails, the code is gone, and the right PIN is refused after it', async () => {
    const s = await setup();
    for (let i = 1; i < max; i++) await expect(s.token('0000')).rejects.toMatchObject({ code: 'invalid_grant' });
    await expect(s.token('0000')).rejects.toMatchObject({ code: 'invalid_grant', message: expect.stringContaining('no attempts are left') });
    expect(await s.exchange()).toMatchObject({ state: 'failed', failure_reason: 'tx_code_attempts_exhausted' });
    expect(await s.store.get(oid4vciKeys.code(scope, s.code))).toBeUndefined();
    await expect(s.token('4711')).rejects.toMatchObject({ code: 'invalid_grant' });
  });
});

describe('PIN guesses sent at the same time', () => {
  test.each([1, 2, 3, 4, 5])('cannot outrun the limit: a guess is compared only if it was among the first five counted (run %i)', async () => {
    const s = await setup();
    // 41 guesses at once, the right one 31st; each request's place in the count is recorded.
    const pins = [...Array.from({ length: 30 }, (_, i) => String(1000 + i)), '4711', ...Array.from({ length: 10 }, (_, i) => String(2000 + i))];
    const results = await Promise.allSettled(pins.map((pin) => guess.run({ pin }, () => s.token(pin))));
    const outcome = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'redeemed'));
    const right = pins.indexOf('4711');
    const place = s.store.counted.get('4711');
    // Redeemed only if the right PIN was counted among the first five; refused otherwise; nothing else redeems.
    expect({ outcome: outcome[right], place: place !== undefined && place <= 5 ? 'first five' : 'later' }).toEqual(
      outcome[right] === 'redeemed' ? { outcome: 'redeemed', place: 'first five' } : { outcome: 'invalid_grant', place: expect.anything() },
    );
    expect(outcome.filter((o, i) => i !== right && o !== 'invalid_grant')).toEqual([]);
    const ex = await s.exchange();
    expect(ex.state).toBe(outcome[right] === 'redeemed' ? 'redeemed' : 'failed');
  });

  test('a right PIN counted past the limit is not compared: invalid_grant, and the exchange fails', async () => {
    // Deterministic form of the race above: the counter already stands at the limit (the other
    // guesses were counted) while the exchange is still `offer` (their burn has not committed yet).
    const s = await setup();
    const max = DEFAULT_PROTOCOL_SETTINGS.maxTxCodeAttempts;
    await s.store.increment(oid4vciKeys.exchange(scope, s.exchangeId), 'tx_code_attempts', undefined, max);
    expect(await s.exchange()).toMatchObject({ state: 'offer', tx_code_attempts: max });
    await expect(s.token('4711')).rejects.toMatchObject({ code: 'invalid_grant' });
    expect((await s.exchange()).state).toBe('failed');
  });

  test('a right PIN among the first guesses still redeems, and only once', async () => {
    const s = await setup();
    const results = await Promise.allSettled([s.token('1111'), s.token('4711'), s.token('4711'), s.token('2222')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await s.exchange()).state).toBe('redeemed');
  });

  test('a request with the right PIN that fails for another reason (a bad DPoP proof) uses up no attempt', async () => {
    const s = await setup();
    for (let i = 0; i < 7; i++) await expect(s.token('4711', { dpop: 'not.a.proof' })).rejects.toMatchObject({ code: 'invalid_dpop_proof' });
    expect((await s.exchange()).tx_code_attempts ?? 0).toBe(0);
    await expect(s.token('4711')).resolves.toMatchObject({ token_type: 'Bearer' });
  });

  test('a guess at an exchange deleted meanwhile does not bring it back', async () => {
    const s = await setup();
    const pending = s.token('0000');
    await s.store.write([{ type: 'delete', key: oid4vciKeys.exchange(scope, s.exchangeId) }]);
    await expect(pending).rejects.toMatchObject({ code: 'invalid_grant' });
    expect(await s.store.get(oid4vciKeys.exchange(scope, s.exchangeId))).toBeUndefined();
  });
});
