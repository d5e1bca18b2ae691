import type { IndexName } from '../service/resources';

/**
 * The single-table store port. Features build keys with lib/store/keys.ts (never from caller input)
 * and speak only this interface; lib/adapters/dynamodb-store.ts implements it on DynamoDB.
 */
export interface ItemKey {
  readonly PK: string;
  readonly SK: string;
}

export type Item = ItemKey & Record<string, unknown>;

/**
 * `exists` / `not_exists` test the item; `{ equals }` requires the item to exist with each named
 * attribute equal to the given value (optimistic concurrency on a counter or state); `{ missing }`
 * requires the item to exist without the named attributes (a state not reached yet); `{ below }`
 * requires each named number to be absent or less than the bound, `{ atLeast }` present and at least
 * the bound (a quota before an `add` of +1 / -1).
 */
export type Condition =
  | 'exists'
  | 'not_exists'
  | { readonly equals: Readonly<Record<string, unknown>> }
  | { readonly missing: readonly string[] }
  | { readonly below: Readonly<Record<string, number>> }
  | { readonly atLeast: Readonly<Record<string, number>> };

export type WriteOp =
  | { readonly type: 'put'; readonly item: Item; readonly condition?: Condition }
  | { readonly type: 'delete'; readonly key: ItemKey; readonly condition?: Condition }
  | {
      readonly type: 'update';
      readonly key: ItemKey;
      readonly set: Readonly<Record<string, unknown>>;
      /** Atomic additions to numeric attributes (absent counts as 0). */
      readonly add?: Readonly<Record<string, number>>;
      readonly remove?: readonly string[];
      readonly condition?: Condition;
    }
  | { readonly type: 'check'; readonly key: ItemKey; readonly condition: Condition };

export interface QueryOptions {
  /** Query a sparse lookup index instead of the base table. */
  readonly index?: IndexName;
  readonly skBeginsWith?: string;
  /** Sort keys from the first to the second, both included (not with skBeginsWith). */
  readonly skBetween?: readonly [string, string];
  readonly limit?: number;
  readonly consistent?: boolean;
  /** Newest-first by sort key. */
  readonly descending?: boolean;
}

/** One page of a query: its items, and where the next page starts (absent on the last page). */
export interface Page {
  readonly items: Item[];
  readonly next?: Readonly<Record<string, unknown>>;
}

export interface ItemStore {
  get(key: ItemKey, opts?: { consistent?: boolean }): Promise<Item | undefined>;
  /** Several items in one round trip (at most 100 keys), in the keys' order; undefined where none is. */
  getMany(keys: readonly ItemKey[], opts?: { consistent?: boolean }): Promise<(Item | undefined)[]>;
  /** All items of a partition (following pages), up to `limit`. */
  query(pk: string, opts?: QueryOptions): Promise<Item[]>;
  /** One page of at most `limit` items, starting after `after` (a previous page's `next`). */
  queryPage(pk: string, opts: QueryOptions & { readonly limit: number; readonly after?: Readonly<Record<string, unknown>> }): Promise<Page>;
  /**
   * Atomic: all operations or none. Throws {@link ConditionFailedError} naming the failed ops, or
   * {@link WriteConflictError} when a concurrent write to the same items won.
   */
  write(ops: readonly WriteOp[]): Promise<void>;
  /**
   * Atomically adds `by` (default 1) to a numeric attribute (created at 0) and returns the new value.
   * With a condition, only if it holds ({@link ConditionFailedError} otherwise: nothing is created or counted).
   */
  increment(key: ItemKey, attribute: string, condition?: Condition, by?: number): Promise<number>;
}

export class ConditionFailedError extends Error {
  constructor(readonly failedIndexes: readonly number[]) {
    super(`Condition failed for operation(s) ${failedIndexes.join(', ')}`);
    this.name = 'ConditionFailedError';
  }
}

/** A transaction lost to a concurrent write of the same items: re-read and decide again. */
export class WriteConflictError extends Error {
  constructor() {
    super('A concurrent write to the same items won');
    this.name = 'WriteConflictError';
  }
}
