import { ConditionFailedError, type Condition, type Item, type ItemKey, type ItemStore, type Page, type QueryOptions, type WriteOp } from '../../lib/store/port';

const id = (k: ItemKey) => `${k.PK}\u0000${k.SK}`;

/** An in-memory {@link ItemStore} with the port's semantics (conditions, atomic batches), for unit tests. */
export class MemoryStore implements ItemStore {
  readonly items = new Map<string, Item>();

  async get(key: ItemKey): Promise<Item | undefined> {
    const it = this.items.get(id(key));
    return it ? structuredClone(it) : undefined;
  }

  async getMany(keys: readonly ItemKey[]): Promise<(Item | undefined)[]> {
    return Promise.all(keys.map((k) => this.get(k)));
  }

  async query(pk: string, opts: QueryOptions = {}): Promise<Item[]> {
    const [pkAttr, skAttr] = opts.index === 'GSI1' ? ['GSI1PK', 'GSI1SK'] : opts.index === 'PublicDids' ? ['PDID', 'SK'] : ['PK', 'SK'];
    const out = [...this.items.values()]
      .filter((i) => i[pkAttr] === pk && (!opts.skBeginsWith || String(i[skAttr]).startsWith(opts.skBeginsWith)))
      .filter((i) => !opts.skBetween || (String(i[skAttr]) >= opts.skBetween[0] && String(i[skAttr]) <= opts.skBetween[1]))
      .sort((a, b) => (String(a[skAttr]) < String(b[skAttr]) ? -1 : 1));
    if (opts.descending) out.reverse();
    return structuredClone(out.slice(0, opts.limit ?? out.length));
  }

  /** Pages by position after the `after` item's sort key, like DynamoDB's ExclusiveStartKey. */
  async queryPage(pk: string, opts: QueryOptions & { limit: number; after?: Readonly<Record<string, unknown>> }): Promise<Page> {
    const { limit, after, ...rest } = opts;
    const all = await this.query(pk, rest);
    const skAttr = opts.index === 'GSI1' ? 'GSI1SK' : 'SK';
    const from = after ? all.findIndex((i) => i[skAttr] === after[skAttr]) + 1 : 0;
    const items = all.slice(from, from + limit);
    const last = items.at(-1);
    return { items, ...(from + limit < all.length && last ? { next: { PK: last.PK, SK: last.SK, [skAttr]: last[skAttr] } } : {}) };
  }

  private holds(key: ItemKey, c: Condition | undefined): boolean {
    const it = this.items.get(id(key));
    if (c === undefined) return true;
    if (c === 'exists') return !!it;
    if (c === 'not_exists') return !it;
    if ('missing' in c) return !!it && c.missing.every((k) => it[k] === undefined);
    if ('below' in c) return Object.entries(c.below).every(([k, bound]) => typeof it?.[k] !== 'number' || (it[k] as number) < bound);
    if ('atLeast' in c) return Object.entries(c.atLeast).every(([k, bound]) => typeof it?.[k] === 'number' && (it[k] as number) >= bound);
    return !!it && Object.entries(c.equals).every(([k, v]) => JSON.stringify(it[k]) === JSON.stringify(v));
  }

  async write(ops: readonly WriteOp[]): Promise<void> {
    const failed = ops.map((op, i) => (this.holds(op.type === 'put' ? op.item : op.key, op.condition) ? -1 : i)).filter((i) => i >= 0);
    if (failed.length) throw new ConditionFailedError(failed);
    for (const op of ops) {
      if (op.type === 'put') this.items.set(id(op.item), structuredClone(op.item));
      else if (op.type === 'delete') this.items.delete(id(op.key));
      else if (op.type === 'update') {
        const cur = this.items.get(id(op.key)) ?? { PK: op.key.PK, SK: op.key.SK };
        const next: Item = { ...cur, ...structuredClone(op.set) } as Item;
        for (const r of op.remove ?? []) delete next[r];
        for (const [k, v] of Object.entries(op.add ?? {})) next[k] = ((cur[k] as number | undefined) ?? 0) + v;
        this.items.set(id(op.key), next);
      }
    }
  }

  async increment(key: ItemKey, attribute: string, condition?: Condition, by = 1): Promise<number> {
    if (!this.holds(key, condition)) throw new ConditionFailedError([0]);
    const cur = this.items.get(id(key)) ?? { PK: key.PK, SK: key.SK };
    const value = ((cur[attribute] as number | undefined) ?? 0) + by;
    this.items.set(id(key), { ...cur, [attribute]: value });
    return value;
  }
}
