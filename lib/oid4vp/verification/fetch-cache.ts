/** One load in flight, shared by its callers; it is cancelled only when every caller has given up. */
interface Pending {
  readonly promise: Promise<unknown>;
  readonly controller: AbortController;
  /** Callers still waiting that can give up (have a signal). */
  waiting: number;
  /** A caller without a signal waits: the load is never cancelled. */
  kept: boolean;
}

/**
 * A small in-memory cache of fetched documents: each entry lives for its own TTL, the oldest entry
 * goes when the cache is full, failures are not kept, and concurrent callers for the same key share
 * one in-flight load (N presentations arriving together cost one fetch). A caller's `signal` (its
 * deadline) ends its own wait at once; the shared load is aborted only when no caller waits for it
 * any more, so one verification's deadline never fails another's fetch.
 */
export class FetchCache {
  private readonly entries = new Map<string, { value: unknown; expiresAt: number }>();
  private readonly inFlight = new Map<string, Pending>();

  constructor(
    private readonly opts: { readonly maxEntries: number; readonly now?: () => number } = { maxEntries: 500 },
  ) {}

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /**
   * The cached value, or the loader's; the loader says how long its value may be kept (0: not at
   * all) and receives the signal that cancels it. Rejects with `signal.reason` when `signal` aborts.
   */
  async get<T>(key: string, load: (signal: AbortSignal) => Promise<{ value: T; ttlMs: number }>, signal?: AbortSignal): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.value as T;
    if (hit) this.entries.delete(key);
    if (signal?.aborted) throw signal.reason;
    let pending = this.inFlight.get(key);
    if (!pending) {
      const controller = new AbortController();
      const promise = load(controller.signal)
        .then(({ value, ttlMs }) => {
          if (ttlMs > 0) this.put(key, value, ttlMs);
          return value;
        })
        .finally(() => {
          if (this.inFlight.get(key) === created) this.inFlight.delete(key);
        });
      const created: Pending = { promise, controller, waiting: 0, kept: false };
      this.inFlight.set(key, created);
      pending = created;
    }
    if (!signal) {
      pending.kept = true;
      return pending.promise as Promise<T>;
    }
    const shared = pending;
    shared.waiting++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        shared.waiting--;
        if (shared.waiting === 0 && !shared.kept) {
          shared.controller.abort(signal.reason);
          // A cancelled load is no one's answer: the next caller starts afresh.
          if (this.inFlight.get(key) === shared) this.inFlight.delete(key);
        }
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      shared.promise.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          if (!signal.aborted) shared.waiting--;
          resolve(v as T);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          if (!signal.aborted) shared.waiting--;
          reject(e);
        },
      );
    });
  }

  private put(key: string, value: unknown, ttlMs: number): void {
    this.entries.delete(key);
    while (this.entries.size >= this.opts.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Cache-Control's max-age in seconds; 0 for no-store / no-cache; undefined when it says nothing. */
export function cacheControlMaxAge(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return undefined;
  const directives = value.toLowerCase().split(',').map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)).find(Boolean);
  return maxAge ? Number(maxAge[1]) : undefined;
}
