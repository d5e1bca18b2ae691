import { randomBytes } from 'node:crypto';
import { ConditionFailedError, type ItemKey, type ItemStore } from '../store/port';

/** One counter to hold a place in: at most `cap` holders at once. */
export interface Slot {
  readonly key: ItemKey;
  readonly cap: number;
}

/** The places a job holds; give them back with {@link InFlightLimiter.release}. */
export interface Lease {
  readonly token: string;
  readonly keys: readonly ItemKey[];
}

/** What else to write on a counter item when its place is given back (an endpoint's health). */
export interface ReleaseNote {
  readonly key: ItemKey;
  readonly set?: Readonly<Record<string, unknown>>;
  readonly remove?: readonly string[];
}

const COUNT = 'n';
const HOLDER = 'h_';
/** Idle counters disappear (DynamoDB TTL) a day after their last use. */
const IDLE_TTL_SECONDS = 86400;

/**
 * Caps on jobs in flight across every instance of a worker: each counter item holds a count `n` and
 * one attribute per holder (`h_<token>`: when its lease ends). Taking a place is one conditional
 * update (count below the cap: add 1, name the holder); giving it back is another (the holder still
 * named: remove it, subtract 1), so the count is always the number of holders. A holder that died
 * without giving back keeps its place only until its lease ends: a job refused at the cap removes
 * the expired holders and asks once more (each instance looks at a counter at most every quarter
 * lease, so that a refusal usually costs one write). Single-item updates only, never transactions:
 * many instances update the same counter at once, and transactions on one item conflict.
 */
export class InFlightLimiter {
  private readonly now: () => number;
  private readonly newToken: () => string;
  /** When this instance last looked at a counter for expired holders (bounded: cleared when full). */
  private readonly looked = new Map<string, number>();

  constructor(
    private readonly deps: {
      readonly store: ItemStore;
      readonly leaseMs: number;
      readonly now?: () => number;
      readonly newToken?: () => string;
    },
  ) {
    this.now = deps.now ?? Date.now;
    this.newToken = deps.newToken ?? (() => randomBytes(9).toString('base64url'));
  }

  /**
   * Takes a place in each slot, in order (for `into`: further places of that lease); when one is
   * full, gives back those this call took and says which (its index). Put the slot most likely full
   * first: a refusal then touches fewer counters.
   */
  async acquire(slots: readonly Slot[], into?: Lease): Promise<{ readonly lease: Lease } | { readonly full: number }> {
    const token = into?.token ?? this.newToken();
    const held: ItemKey[] = [];
    for (const [i, slot] of slots.entries()) {
      if (await this.take(slot, token)) {
        held.push(slot.key);
        continue;
      }
      await this.release({ token, keys: held });
      return { full: i };
    }
    return { lease: { token, keys: [...(into?.keys ?? []), ...held] } };
  }

  /** Gives the lease's places back, writing each note on its counter (also when the place had expired). */
  async release(lease: Lease, notes: readonly ReleaseNote[] = []): Promise<void> {
    const holder = `${HOLDER}${lease.token}`;
    const noteOf = (key: ItemKey) => notes.find((n) => n.key.PK === key.PK && n.key.SK === key.SK);
    await Promise.all(
      lease.keys.map(async (key) => {
        const note = noteOf(key);
        try {
          await this.deps.store.write([
            {
              type: 'update',
              key,
              set: { ...(note?.set ?? {}) },
              remove: [holder, ...(note?.remove ?? [])],
              add: { [COUNT]: -1 },
              condition: { atLeast: { [holder]: 0 } },
            },
          ]);
        } catch (err) {
          if (!(err instanceof ConditionFailedError)) throw err;
          // Our lease ran out and another job removed us (and counted us out): only the note is left to write.
          if (note && (note.set || note.remove)) {
            await this.deps.store.write([{ type: 'update', key, set: { ...(note.set ?? {}) }, remove: [...(note.remove ?? [])], condition: 'exists' }]).catch((e) => {
              if (!(e instanceof ConditionFailedError)) throw e;
            });
          }
        }
      }),
    );
  }

  private async take(slot: Slot, token: string): Promise<boolean> {
    for (let round = 0; round < 2; round++) {
      const now = this.now();
      try {
        await this.deps.store.write([
          {
            type: 'update',
            key: slot.key,
            set: { [`${HOLDER}${token}`]: now + this.deps.leaseMs, ttl: Math.floor(now / 1000) + IDLE_TTL_SECONDS },
            add: { [COUNT]: 1 },
            condition: { below: { [COUNT]: slot.cap } },
          },
        ]);
        return true;
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
        if (round > 0 || !this.mayLook(slot.key) || !(await this.removeExpired(slot.key))) return false;
      }
    }
    return false;
  }

  private mayLook(key: ItemKey): boolean {
    const id = `${key.PK}\u0000${key.SK}`;
    const now = this.now();
    const last = this.looked.get(id);
    if (last !== undefined && now - last < this.deps.leaseMs / 4) return false;
    if (this.looked.size >= 1000) this.looked.clear();
    this.looked.set(id, now);
    return true;
  }

  /** Removes holders whose lease ended; true when there were any (then the caller asks again). */
  private async removeExpired(key: ItemKey): Promise<boolean> {
    const item = await this.deps.store.get(key, { consistent: true });
    const now = this.now();
    const expired = Object.entries(item ?? {})
      .filter(([name, until]) => name.startsWith(HOLDER) && typeof until === 'number' && until <= now)
      .map(([name]) => name);
    if (expired.length === 0) return false;
    try {
      await this.deps.store.write([
        { type: 'update', key, set: {}, remove: expired, add: { [COUNT]: -expired.length }, condition: { atLeast: Object.fromEntries(expired.map((h) => [h, 0])) } },
      ]);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      // Another job removed or released one of them first: the count moved anyway, so ask again.
    }
    return true;
  }
}
