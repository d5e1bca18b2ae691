import { isIP } from 'node:net';
import { addressAllowed } from './address-policy';

export const MAX_TARGET_URLS = 10;
export const MAX_TARGET_URL_LENGTH = 2048;

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain']);

/**
 * Why a webhook target URL is unacceptable, or null. Checked when it is saved; the worker checks the
 * resolved addresses again on every attempt (a name can resolve differently later).
 */
export function targetUrlProblem(raw: string, opts: { allowLoopback: boolean }): string | null {
  if (raw.length > MAX_TARGET_URL_LENGTH) return `longer than ${MAX_TARGET_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.hash || url.href.includes('#')) return 'must not have a fragment';
  // A trailing dot names the same host (localhost. is localhost).
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  const literal = isIP(host) !== 0;
  const loopbackHost = LOOPBACK_NAMES.has(host) || host.endsWith('.localhost') || (literal && addressAllowed(host, { allowLoopback: true }) && !addressAllowed(host, { allowLoopback: false }));
  if (url.protocol === 'http:') {
    if (!(opts.allowLoopback && loopbackHost)) return opts.allowLoopback ? 'must use https (http only for loopback hosts)' : 'must use https';
  } else if (url.protocol !== 'https:') {
    return 'must use https';
  }
  if (loopbackHost && !opts.allowLoopback) return 'must not point at a loopback host';
  if (literal && !addressAllowed(host, opts)) return 'must not point at a private, link-local or reserved address';
  return null;
}

/** The stored form of a valid target URL: `new URL(u).href` with a host's trailing dot dropped (same host). */
export function normaliseTargetUrl(raw: string): string {
  const url = new URL(raw);
  if (url.hostname.endsWith('.')) url.hostname = url.hostname.slice(0, -1);
  return url.href;
}
