import type { PublicJwk } from '../keys/port';
import { multibaseKey, primaryFragment, type DidMethod } from './methods';

export interface DidDocument {
  readonly '@context': string[];
  readonly id: string;
  readonly verificationMethod: { readonly id: string; readonly type: string; readonly controller: string; readonly [k: string]: unknown }[];
  readonly [k: string]: unknown;
}

/**
 * The DID document of a DID on one key: a JsonWebKey2020 verification method with `publicKeyJwk` under
 * the `kid` fragment (what JWT / SD-JWT verifiers dereference). Methods whose documents are defined by
 * their spec (did:key, did:jwk) keep exactly that one method, so outside resolvers agree on its id.
 * The others also list an Ed25519 key as an Ed25519VerificationKey2020 with `publicKeyMultibase` (for
 * Data Integrity and Indy-style consumers). did:jwk follows its spec's `use` rules for keyAgreement.
 */
export function didDocument(did: string, method: DidMethod, jwk: PublicJwk & { readonly use?: string }): DidDocument {
  const primary = `${did}#${primaryFragment(method, jwk)}`;
  const { use, ...publicKeyJwk } = jwk;
  const methods: DidDocument['verificationMethod'] = [{ id: primary, type: 'JsonWebKey2020', controller: did, publicKeyJwk }];
  const context = ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/jws-2020/v1'];
  if (jwk.crv === 'Ed25519' && method !== 'jwk' && method !== 'key') {
    methods.push({ id: `${did}#key-multibase`, type: 'Ed25519VerificationKey2020', controller: did, publicKeyMultibase: multibaseKey(jwk) });
    context.push('https://w3id.org/security/suites/ed25519-2020/v1');
  }
  const ids = methods.map((m) => m.id);
  const signing = { authentication: ids, assertionMethod: ids, capabilityInvocation: ids, capabilityDelegation: ids };
  if (method === 'jwk') {
    // did:jwk: "sig" keys only sign, "enc" keys only agree keys, a key without `use` does both.
    const relationships = use === 'enc' ? { keyAgreement: ids } : use === 'sig' ? signing : { ...signing, keyAgreement: ids };
    return { '@context': context, id: did, verificationMethod: methods, ...relationships };
  }
  return { '@context': context, id: did, verificationMethod: methods, ...signing };
}
