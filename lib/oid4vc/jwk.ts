/**
 * JWK members that carry private or symmetric key material (RFC 7518 §6.2.2 EC and OKP `d`, §6.3.2
 * RSA `d` `p` `q` `dp` `dq` `qi` `oth`, §6.4.1 `k`). A key a caller sends in a JOSE header or a `cnf`
 * must be public: OpenID4VCI 1.0 Appendix F.4 ("the header parameter does not contain a private key"),
 * RFC 9449 §4.3 (DPoP, check 7), RFC 7800 §3.2 (`cnf.jwk`). Refusing it protects the caller, whose
 * private key would otherwise be recorded as if it were public (in a credential's `cnf`, in logs).
 */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** The private members `jwk` has (none when it is not an object). */
export function privateJwkMembers(jwk: unknown): string[] {
  if (typeof jwk !== 'object' || jwk === null) return [];
  return PRIVATE_JWK_MEMBERS.filter((m) => Object.hasOwn(jwk, m));
}

/** The `jwk` member of a compact JWS's protected header, or undefined when there is none (or no readable header). */
export function headerJwk(compact: string): unknown {
  const dot = compact.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(compact.slice(0, dot), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header) ? (header as Record<string, unknown>).jwk : undefined;
  } catch {
    return undefined;
  }
}
