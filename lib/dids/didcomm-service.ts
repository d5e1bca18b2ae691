import type { Item, ItemKey, WriteOp } from '../store/port';
import { keys, type TenantScope } from '../store/keys';
import type { DidDocument } from './document';
import type { DidMethod } from './methods';
import type { DidRecord } from './records';

/**
 * The public DID's DIDComm v1 service (Aries RFC 0067 `did-communication`): what lets an outside agent
 * that resolves the wallet's public DID connect to it (an implicit invitation, RFC 0023/0434).
 *
 * Published as an item of its own in the PublicDids index, beside the DID's item, rather than as new
 * attributes of the DID: the index projects only `qualified, method, public_jwk, deactivated_at`, and
 * changing a GSI's projection means deleting and re-creating it, which an existing deployment cannot
 * take in one update (CloudFormation allows one GSI creation or deletion per update). The service item
 * holds the same projected attributes — `PDID` the DID's lookup value, `qualified` the DID, `method`
 * {@link DIDCOMM_SERVICE_MARKER}, `public_jwk` the DIDComm key (Ed25519) — and its sort key carries the
 * wallet's public reference, which the endpoint URL needs and no projected attribute can hold (a
 * table's keys are projected into every index).
 */

/** `method` of the service item: never a DID method, so no reader takes it for a DID. */
export const DIDCOMM_SERVICE_MARKER = 'didcomm-service';

/** The DID methods whose documents get the service; did:key and did:jwk documents are fixed by their specs. */
export const DIDCOMM_SERVICE_METHODS: readonly DidMethod[] = ['sov', 'indy', 'web'];

const SERVICE_SK_PREFIX = 'DCPUBSVC#';

/** The service item: one per wallet, in its partition, named by the wallet's (immutable) public reference. */
export function didcommServiceKey(scope: TenantScope, publicRef: string): ItemKey {
  return { PK: keys.walletPartition(scope), SK: `${SERVICE_SK_PREFIX}${publicRef}` };
}

/** The public reference in a service item's sort key, or undefined when the item is not one. */
export function publicRefOfServiceItem(item: Item): string | undefined {
  const sk = item.SK;
  return typeof sk === 'string' && sk.startsWith(SERVICE_SK_PREFIX) ? sk.slice(SERVICE_SK_PREFIX.length) : undefined;
}

/** What set-public-did adds to its transaction so that the service follows the public DID (lib/didcomm/public-did.ts). */
export interface PublicDidServices {
  /**
   * The writes that point the wallet's DIDComm service at `did` (or withdraw it, for a method that
   * gets none); empty when it already says so. Creates the wallet's DIDComm key on first use.
   */
  writesFor(scope: TenantScope, did: Pick<DidRecord, 'qualified' | 'method'>): Promise<WriteOp[]>;
}

export const DIDCOMM_KEY_FRAGMENT = 'didcomm-1';
export const DIDCOMM_SERVICE_FRAGMENT = 'did-communication';

/**
 * The DID's document with its DIDComm service: the DIDComm key as an Ed25519VerificationKey2018
 * (`publicKeyBase58`, the form ACA-Py and Credo both read) in `keyAgreement` only — what it is for
 * (peers encrypt to it), and one of the two relationships Credo dereferences a service's recipient keys
 * in — never in `authentication` or `assertionMethod`: a software key must not prove control of the DID
 * or sign as it. The service names the key by its DID URL (Credo does
 * not resolve did:key references inside a document).
 */
export function withDidcommService(doc: DidDocument, service: { verkey: string; endpoint: string }): DidDocument {
  const keyId = `${doc.id}#${DIDCOMM_KEY_FRAGMENT}`;
  return {
    ...doc,
    '@context': [...doc['@context'], 'https://w3id.org/security/suites/ed25519-2018/v1'],
    verificationMethod: [...doc.verificationMethod, { id: keyId, type: 'Ed25519VerificationKey2018', controller: doc.id, publicKeyBase58: service.verkey }],
    keyAgreement: [...((doc.keyAgreement as string[] | undefined) ?? []), keyId],
    service: [
      {
        id: `${doc.id}#${DIDCOMM_SERVICE_FRAGMENT}`,
        type: 'did-communication',
        priority: 0,
        recipientKeys: [keyId],
        routingKeys: [],
        serviceEndpoint: service.endpoint,
        accept: ['didcomm/aip1', 'didcomm/aip2;env=rfc19'],
      },
    ],
  };
}
