import * as credentials from '@digitalbazaar/credentials-context';
import * as dataIntegrity from '@digitalbazaar/data-integrity-context';
import * as multikey from '@digitalbazaar/multikey-context';
import * as security from '@digitalbazaar/security-context';
import * as statusList from '@digitalbazaar/vc-bitstring-status-list-context';
import * as did from 'did-context';
import * as ed2018 from 'ed25519-signature-2018-context';
import * as ed2020 from 'ed25519-signature-2020-context';

/**
 * The contexts the service answers from memory, never from the network: the W3C credentials v1 and
 * v2 (with v2's undefined-terms companion), DID v1, security v1/v2, the Ed25519 2018 and 2020 suites,
 * Data Integrity v1/v2, Multikey v1 and Bitstring Status List. Each package ships the exact documents
 * published at these URLs (their integrity is the packages'; they are pinned in package-lock.json).
 */
type ContextPackage = { readonly contexts: ReadonlyMap<string, unknown> };
// ed25519-signature-2018-context comes with @digitalbazaar/ed25519-signature-2018 (pinned by the lock file):
// taken from there rather than from the suite, so that serving contexts does not bundle the signing stack.
const PACKAGES: readonly ContextPackage[] = [credentials, did, security, ed2018, ed2020, dataIntegrity, multikey, statusList];

export const BUNDLED_CONTEXTS: ReadonlyMap<string, Readonly<Record<string, unknown>>> = new Map(
  PACKAGES.flatMap((p) => [...p.contexts.entries()] as [string, Readonly<Record<string, unknown>>][]),
);

/** The URLs every credential and proof suite here needs, named once for the suites and tests. */
export const CONTEXT_URLS = {
  credentialsV1: 'https://www.w3.org/2018/credentials/v1',
  credentialsV2: 'https://www.w3.org/ns/credentials/v2',
  did: 'https://www.w3.org/ns/did/v1',
  ed25519_2018: 'https://w3id.org/security/suites/ed25519-2018/v1',
  ed25519_2020: 'https://w3id.org/security/suites/ed25519-2020/v1',
  dataIntegrityV1: 'https://w3id.org/security/data-integrity/v1',
  dataIntegrityV2: 'https://w3id.org/security/data-integrity/v2',
  multikey: 'https://w3id.org/security/multikey/v1',
  statusList: 'https://www.w3.org/ns/credentials/status/v1',
} as const;
