import { DataIntegrityProof } from '@digitalbazaar/data-integrity';
import { cryptosuite as ecdsaRdfc2019 } from '@digitalbazaar/ecdsa-rdfc-2019-cryptosuite';
import { Ed25519Signature2018 } from '@digitalbazaar/ed25519-signature-2018';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { cryptosuite as eddsaRdfc2022 } from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as vc from '@digitalbazaar/vc';
import { didDocument, type DidDocument } from '../dids/document';
import type { DidRecord } from '../dids/records';
import { BadRequestError } from '../http/errors';
import type { KeyAlg, KeyManager } from '../keys/port';
import type { TenantScope } from '../store/keys';
import { CONTEXT_URLS } from './contexts';
import { assertSafe, callerErrorOf, type JsonLdLoader, type JsonObject } from './loader';

/**
 * Linked-data proofs on JSON-LD credentials, signed through the key manager (KMS deployed, local keys
 * in `npm start` and tests): the Digital Bazaar suites take an external signer `{id, algorithm,
 * sign({data})}` and never see a private key.
 *
 * - `Ed25519Signature2020` (the contract's value and the default), `Ed25519Signature2018`: the suite
 *   hands over 64 bytes (hash of the proof options ‖ hash of the document; the 2018 suite a detached
 *   JWS signing input), signed as pure EdDSA.
 * - `DataIntegrityProof` with `eddsa-rdfc-2022` (Ed25519) or `ecdsa-rdfc-2019` (P-256): for the
 *   latter the cryptosuite wants ECDSA with SHA-256 over the data and an IEEE P1363 `r‖s` signature,
 *   which is what the key port returns (the KMS adapter converts KMS's DER).
 */
import { CRYPTOSUITES, DEFAULT_PROOF_TYPE, PROOF_TYPES, type Cryptosuite, type ProofType } from './proof-names';
export { CRYPTOSUITES, DEFAULT_PROOF_TYPE, PROOF_TYPES, type Cryptosuite, type ProofType };

interface SuiteSpec {
  readonly alg: KeyAlg;
  /** The signer's `algorithm` as the suite checks it. */
  readonly signerAlgorithm: string;
  /** Verification method types the suite's verifier accepts, most fitting first. */
  readonly methodTypes: readonly string[];
  build(signer: ExternalSigner): unknown;
}

const ED25519_JWK = (vm: VerificationMethod) => vm.type === 'JsonWebKey2020' && (vm.publicKeyJwk as { crv?: string } | undefined)?.crv === 'Ed25519';
const P256_JWK = (vm: VerificationMethod) => vm.type === 'JsonWebKey2020' && (vm.publicKeyJwk as { crv?: string } | undefined)?.crv === 'P-256';

type VerificationMethod = DidDocument['verificationMethod'][number];

/**
 * Which verification methods of our DID documents each suite's verifier dereferences (checked by the
 * tests with @digitalbazaar/vc): the 2020 suite and eddsa-rdfc-2022 read an Ed25519VerificationKey2020
 * or an Ed25519 JsonWebKey2020 (through @digitalbazaar/ed25519-multikey); the 2018 suite only an
 * Ed25519VerificationKey2018/2020, or a did:key, whose verifiers derive the method from the key;
 * ecdsa-rdfc-2019 a P-256 JsonWebKey2020 (ecdsa-multikey).
 */
const MATCHERS: Readonly<Record<string, (vm: VerificationMethod) => boolean>> = {
  Ed25519VerificationKey2020: (vm) => vm.type === 'Ed25519VerificationKey2020',
  Ed25519VerificationKey2018: (vm) => vm.type === 'Ed25519VerificationKey2018',
  'JsonWebKey2020 (Ed25519)': ED25519_JWK,
  'JsonWebKey2020 (P-256)': P256_JWK,
  // did:key is resolved by each verifier from the key itself: Credo's and ACA-Py's resolvers derive an
  // Ed25519VerificationKey2018 under this id (our resolver's JsonWebKey2020 form is the spec's JWK option).
  'the did:key key (Ed25519)': (vm) => vm.id.startsWith('did:key:') && ED25519_JWK(vm),
};

const SUITES: Readonly<Record<ProofType | `DataIntegrityProof/${Cryptosuite}`, SuiteSpec | undefined>> = {
  Ed25519Signature2020: { alg: 'EdDSA', signerAlgorithm: 'Ed25519', methodTypes: ['Ed25519VerificationKey2020', 'JsonWebKey2020 (Ed25519)'], build: (signer) => new Ed25519Signature2020({ signer }) },
  Ed25519Signature2018: { alg: 'EdDSA', signerAlgorithm: 'EdDSA', methodTypes: ['Ed25519VerificationKey2018', 'Ed25519VerificationKey2020', 'the did:key key (Ed25519)'], build: (signer) => new Ed25519Signature2018({ signer }) },
  DataIntegrityProof: undefined,
  'DataIntegrityProof/eddsa-rdfc-2022': { alg: 'EdDSA', signerAlgorithm: 'Ed25519', methodTypes: ['Ed25519VerificationKey2020', 'JsonWebKey2020 (Ed25519)'], build: (signer) => new DataIntegrityProof({ signer, cryptosuite: eddsaRdfc2022 }) },
  'DataIntegrityProof/ecdsa-rdfc-2019': { alg: 'ES256', signerAlgorithm: 'P-256', methodTypes: ['JsonWebKey2020 (P-256)'], build: (signer) => new DataIntegrityProof({ signer, cryptosuite: ecdsaRdfc2019 }) },
};

/** A proof the issuing DID's key or document cannot make: a 400 saying why. */
export class UnsupportedProofError extends BadRequestError {
  constructor(message: string) {
    super(message, 'unsupported_proof_type');
  }
}

export interface SigningKey {
  /** The issuing DID and its document (lib/dids/document.ts), as resolvers serve it. */
  readonly did: string;
  readonly document: DidDocument;
  /** The key manager's reference and algorithm of the DID's key. */
  readonly ref: string;
  readonly alg: KeyAlg;
}

/**
 * A wallet's DID record (lib/dids, e.g. from signingIdentity) as the key a proof is signed with: its
 * verification methods as the resolver serves them (a public DID's document adds its DIDComm service).
 */
export function signingKeyOf(record: DidRecord): SigningKey {
  return { did: record.qualified, document: didDocument(record.qualified, record.method, record.public_jwk), ref: record.key_ref, alg: record.alg };
}

export interface ProofChoice {
  readonly proofType?: ProofType | undefined;
  /** For DataIntegrityProof; default: eddsa-rdfc-2022 on Ed25519 keys, ecdsa-rdfc-2019 on P-256 keys. */
  readonly cryptosuite?: Cryptosuite | undefined;
  /** A verification method id of the document to sign with (default: the first the suite accepts). */
  readonly verificationMethod?: string | undefined;
}

/** The suite, and the verification method of the document, a proof choice signs with; or an {@link UnsupportedProofError}. */
export function planProof(key: SigningKey, choice: ProofChoice = {}): { suite: SuiteSpec; name: string; verificationMethod: string } {
  const proofType = choice.proofType ?? DEFAULT_PROOF_TYPE;
  if (!PROOF_TYPES.includes(proofType)) throw new UnsupportedProofError(`proofType must be one of ${PROOF_TYPES.join(', ')}`);
  if (choice.cryptosuite !== undefined && proofType !== 'DataIntegrityProof') throw new UnsupportedProofError(`cryptosuite applies to DataIntegrityProof only, not ${proofType}`);
  const cryptosuite = proofType === 'DataIntegrityProof' ? (choice.cryptosuite ?? (key.alg === 'ES256' ? 'ecdsa-rdfc-2019' : 'eddsa-rdfc-2022')) : undefined;
  if (cryptosuite !== undefined && !CRYPTOSUITES.includes(cryptosuite)) throw new UnsupportedProofError(`cryptosuite must be one of ${CRYPTOSUITES.join(', ')}`);
  const name = cryptosuite ? `DataIntegrityProof with ${cryptosuite}` : proofType;
  const suite = SUITES[cryptosuite ? (`DataIntegrityProof/${cryptosuite}` as const) : proofType]!;
  const curve = (alg: KeyAlg) => (alg === 'EdDSA' ? 'an Ed25519' : 'a P-256');
  if (suite.alg !== key.alg) throw new UnsupportedProofError(`${name} needs ${curve(suite.alg)} key; ${key.did} has ${curve(key.alg)} key`);
  const assertion = new Set((key.document.assertionMethod as string[] | undefined) ?? []);
  const candidates = key.document.verificationMethod.filter((vm) => assertion.has(vm.id));
  if (choice.verificationMethod !== undefined) {
    const vm = candidates.find((m) => m.id === choice.verificationMethod);
    if (!vm) throw new UnsupportedProofError(`${choice.verificationMethod} is not an assertion method of ${key.did}`);
    if (!suite.methodTypes.some((t) => MATCHERS[t]!(vm))) throw new UnsupportedProofError(`${name} cannot be verified with ${vm.id} (${vm.type}); it needs ${suite.methodTypes.join(' or ')}`);
    return { suite, name, verificationMethod: vm.id };
  }
  for (const type of suite.methodTypes) {
    const vm = candidates.find(MATCHERS[type]!);
    if (vm) return { suite, name, verificationMethod: vm.id };
  }
  throw new UnsupportedProofError(`${name} needs a verification method of type ${suite.methodTypes.join(' or ')}, and the DID document of ${key.did} has none (use another proofType)`);
}

const issuerId = (credential: JsonObject): unknown => {
  const issuer = credential.issuer;
  return issuer !== null && typeof issuer === 'object' ? (issuer as { id?: unknown }).id : issuer;
};

/**
 * The checks a credential passes before it is signed, with nothing signed: the proof the key can make,
 * its issuer is the DID, the VC data model's own checks, safe mode over every context through the
 * offline loader. Answers the credential as it will be signed (a v1 credential without issuanceDate
 * gets one, as @digitalbazaar/vc's issue() would give it) and the verification method.
 */
export async function checkCredential(opts: {
  readonly key: SigningKey;
  readonly credential: JsonObject;
  readonly proof?: ProofChoice | undefined;
  readonly documentLoader: JsonLdLoader;
  readonly now?: Date | undefined;
}): Promise<{ credential: JsonObject; plan: ReturnType<typeof planProof> }> {
  const { key } = opts;
  const plan = planProof(key, opts.proof);
  const credential = structuredClone(opts.credential);
  if (issuerId(credential) !== key.did) throw new BadRequestError(`The credential's issuer must be the signing DID ${key.did}`, 'issuer_mismatch');
  // As @digitalbazaar/vc's issue() does for a v1 credential without one (whole seconds), so the check below sees it.
  if ((credential['@context'] as unknown[] | undefined)?.[0] === CONTEXT_URLS.credentialsV1 && credential.issuanceDate === undefined) {
    credential.issuanceDate = `${(opts.now ?? new Date()).toISOString().slice(0, 19)}Z`;
  }
  try {
    vc._checkCredential({ credential, mode: 'issue', ...(opts.now ? { now: opts.now } : {}) });
  } catch (err) {
    throw new BadRequestError(`Not a credential this service signs: ${(err as Error).message}`, 'invalid_credential');
  }
  await assertSafe(credential, opts.documentLoader);
  return { credential, plan };
}

/**
 * Signs a credential: checks it ({@link checkCredential}) before anything reaches the key manager,
 * then adds the proof.
 * Errors a caller caused are 400s (unknown context naming its URL, undefined term naming it, a proof
 * the key cannot make); the key manager's own errors pass through (503 and the like).
 */
export async function signCredential(opts: {
  readonly keyManager: KeyManager;
  readonly scope: TenantScope;
  readonly key: SigningKey;
  readonly credential: JsonObject;
  readonly proof?: ProofChoice;
  readonly documentLoader: JsonLdLoader;
  readonly now?: Date;
}): Promise<JsonObject> {
  const { key } = opts;
  const { credential, plan } = await checkCredential(opts);
  const signer: ExternalSigner = {
    id: plan.verificationMethod,
    algorithm: plan.suite.signerAlgorithm,
    sign: ({ data }) => opts.keyManager.sign(opts.scope, key.ref, key.alg, data),
  };
  try {
    return await vc.issue({ credential, suite: plan.suite.build(signer), documentLoader: opts.documentLoader, ...(opts.now ? { now: opts.now } : {}) });
  } catch (err) {
    throw callerErrorOf(err);
  }
}
