/**
 * Remembers `load`'s result per key (`keyOf` of the argument, the argument itself by default), oldest
 * first out past `max` entries (per-wallet values grow with the tenants a function instance serves).
 * A rejected promise is forgotten, so the next call tries again.
 */
export function memo<A, V>(load: (arg: A) => V, max: number, keyOf: (arg: A) => unknown = (a) => a): (arg: A) => V {
  const cache = new Map<unknown, V>();
  return (arg) => {
    const key = keyOf(arg);
    if (cache.has(key)) return cache.get(key)!;
    const value = load(arg);
    cache.set(key, value);
    if (value instanceof Promise) value.catch(() => cache.get(key) === value && cache.delete(key));
    if (cache.size > max) cache.delete(cache.keys().next().value!);
    return value;
  };
}
