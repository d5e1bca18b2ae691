/**
 * RFC 9110 §13.1.2, If-None-Match: weak comparison (a `W/` prefix is ignored); `*` matches any current
 * representation. True when the request's copy is current, so the answer is a 304 without a body.
 */
export function ifNoneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}
