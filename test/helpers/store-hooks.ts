import { WriteConflictError, type ItemKey, type ItemStore, type WriteOp } from '../../lib/store/port';
import type { MemoryStore } from './memory-store';

type Write = (ops: readonly WriteOp[]) => Promise<void>;

/**
 * A concurrent writer that commits between a request's reads and its write: `before` (the winner,
 * given the store's own write; any write it makes through the store passes unraced) runs once, just before the first write that `when`
 * picks; then that write goes ahead and loses as it would. With `conflict`, DynamoDB cancels both
 * sides: every try of the picked write is cancelled. Returns whether the race happened.
 */
export function raceBefore(store: MemoryStore, when: (ops: readonly WriteOp[]) => boolean, before: (write: Write) => Promise<void>, opts: { conflict?: boolean } = {}): () => boolean {
  const original: Write = store.write.bind(store);
  let raced = false;
  let winning = false;
  store.write = async (ops: readonly WriteOp[]) => {
    // The winner's own writes (a whole concurrent request, say) are not raced.
    if (winning || !when(ops)) return original(ops);
    if (!raced) {
      raced = true;
      winning = true;
      await before(original).finally(() => (winning = false));
    }
    if (opts.conflict) throw new WriteConflictError();
    return original(ops);
  };
  return () => raced;
}

/** Every write that `when` picks fails with `error`, as a store that is down would; the others go ahead. */
export function failWrites(store: MemoryStore, when: (ops: readonly WriteOp[]) => boolean, error: Error): void {
  const original: Write = store.write.bind(store);
  store.write = async (ops: readonly WriteOp[]) => (when(ops) ? Promise.reject(error) : original(ops));
}

/**
 * A lagging replica: eventually consistent reads see nothing yet of the items `stale` picks, as
 * DynamoDB's can just after a write. A read lags unless it asks for `consistent: true`; with
 * `adapterDefault`, only an explicit `consistent: false` lags (the adapter reads consistently unless
 * told otherwise). Returns the store's own `get`, which always sees the latest write.
 */
export function laggingReads(store: ItemStore, stale: (key: ItemKey) => boolean = () => true, opts: { adapterDefault?: boolean } = {}): ItemStore['get'] {
  const get = store.get.bind(store);
  const query = store.query.bind(store);
  const lags = (read: { consistent?: boolean } | undefined, key: ItemKey) => (opts.adapterDefault ? read?.consistent === false : read?.consistent !== true) && stale(key);
  store.get = async (key, read) => (lags(read, key) ? undefined : get(key, read));
  // Each key through the unpatched get: MemoryStore's own getMany would call the patched one without options.
  store.getMany = async (keys, read) => Promise.all(keys.map(async (key) => (lags(read, key) ? undefined : get(key, read))));
  store.query = async (pk, read) => (await query(pk, read)).filter((item) => !lags(read, item));
  return get;
}
