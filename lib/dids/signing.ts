import { BadRequestError, NotFoundError } from '../http/errors';
import type { TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import { didDocument } from './document';
import { qualify, readDid, readPublicDid, type DidRecord } from './records';

const bad = (message: string, code: string, path: string) => new BadRequestError(message, code, [{ path, message }]);

/**
 * The DID and verification method something is signed with: the given DID (else the wallet's public
 * one), active and this wallet's, and a signing method of its document. Errors name the request's
 * fields (`fields.did`, `fields.verificationMethod`), whatever the endpoint calls them.
 */
export async function signingIdentity(
  store: ItemStore,
  scope: TenantScope,
  input: { readonly did?: string | undefined; readonly verificationMethod?: string | undefined },
  fields: { readonly did: string; readonly verificationMethod: string } = { did: 'did', verificationMethod: 'verification_method' },
): Promise<{ did: DidRecord; verificationMethod: string }> {
  let did: DidRecord;
  if (input.did === undefined) {
    const pub = await readPublicDid(store, scope);
    if (!pub) throw bad(`This wallet has no public DID: give ${fields.did}, or make one public (POST /api/v1/set-public-did)`, 'no_public_did', fields.did);
    did = pub;
  } else {
    try {
      did = await readDid(store, scope, input.did);
    } catch (err) {
      if (err instanceof NotFoundError) throw bad(`${input.did} is not a DID of this wallet`, 'unknown_did', fields.did);
      throw err;
    }
  }
  if (did.deactivated_at) throw bad(`${did.qualified} is deactivated`, 'did_deactivated', fields.did);
  if (input.verificationMethod === undefined) return { did, verificationMethod: did.kid };
  const hash = input.verificationMethod.indexOf('#');
  const vm = hash > 0 ? `${qualify(input.verificationMethod.slice(0, hash))}${input.verificationMethod.slice(hash)}` : input.verificationMethod;
  const doc = didDocument(did.qualified, did.method, did.public_jwk);
  const usable = (doc.assertionMethod as string[] | undefined) ?? [];
  if (!usable.includes(vm)) {
    throw bad(`${fields.verificationMethod} must be a signing method of ${did.qualified}: ${usable.join(', ')}`, 'invalid_verification_method', fields.verificationMethod);
  }
  return { did, verificationMethod: vm };
}
