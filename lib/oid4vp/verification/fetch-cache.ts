/**
 * A small in-memory cache of fetched documents: each entry lives for its own TTL, the oldest entry
 * goes when the cache is full, failures are not kept, and concurrent callers for the same key share
 * one in-flight load (N presentations arriving together cost one fetch).
 */
export class FetchCache {
  private readonly entries = new Map<string, { value: unknown; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly opts: { readonly maxEntries: number; readonly now?: () => number } = { maxEntries: 500 },
  ) {}

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /** The cached value, or the loader's; the loader says how long its value may be kept (0: not at all). */
  async get<T>(key: string, load: () => Promise<{ value: T; ttlMs: number }>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.value as T;
    if (hit) this.entries.delete(key);
    const pending = this.inFlight.get(key);
    if (pending) return pending as Promise<T>;
    const promise = load()
      .then(({ value, ttlMs }) => {
        if (ttlMs > 0) this.put(key, value, ttlMs);
        return value;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, promise);
    return promise;
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
