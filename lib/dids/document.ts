import type { PublicJwk } from '../keys/port';
import { multibaseKey, primaryFragment, type DidMethod } from './methods';

/**
 * The DID document of a service-held DID: one JsonWebKey2020 verification method with
 * `publicKeyJwk` (what JWT / SD-JWT verifiers use to check a `kid` DID URL) and, for Ed25519, the
 * same key as an Ed25519VerificationKey2020 with `publicKeyMultibase` (for Data Integrity and
 * Indy-style consumers). Both serve authentication and assertion (issuing credentials).
 */
export function didDocument(did: string, method: DidMethod, jwk: PublicJwk): Record<string, unknown> {
  const primary = `${did}#${primaryFragment(method, jwk)}`;
  const methods: Record<string, unknown>[] = [{ id: primary, type: 'JsonWebKey2020', controller: did, publicKeyJwk: jwk }];
  const context = ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/jws-2020/v1'];
  if (jwk.crv === 'Ed25519' && method !== 'jwk') {
    methods.push({ id: `${did}#key-multibase`, type: 'Ed25519VerificationKey2020', controller: did, publicKeyMultibase: multibaseKey(jwk) });
    context.push('https://w3id.org/security/suites/ed25519-2020/v1');
  }
  const ids = methods.map((m) => m.id);
  return {
    '@context': context,
    id: did,
    verificationMethod: methods,
    authentication: ids,
    assertionMethod: ids,
    capabilityInvocation: ids,
    capabilityDelegation: ids,
  };
}
