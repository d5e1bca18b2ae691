import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { Timestamp } from '../tenancy/contract';
import { MAX_INVITATION_ID } from '../didcomm/records';
import { EXCHANGE_STATES, MAX_TIMEOUT_SECONDS } from '../didcomm/protocols/issue-credential-v2/records';
import { CRYPTOSUITES, PROOF_TYPES } from './proof-names';


/**
 * Schemas of the credential routes of contract 4.2 that JSON-LD issuance answers (docs/jsonld.md,
 * "Issuing over DIDComm"). The contract shows no record shapes: the exchange follows ACA-Py's
 * V20CredExRecord field names.
 */
const RecordId = z.string().min(1).max(128);
const JsonObject = z.record(z.string(), z.unknown());

export const ExchangeView = z
  .object({
    credential_exchange_id: z.string().meta({ description: 'The exchange id (a ULID)' }),
    connection_id: z.string().nullable().meta({ description: 'The connection (contact) it runs on; null until a connection of its invitation answers, and always null for a connectionless exchange (neither contact_id nor invitation_id)' }),
    invitation_id: z.number().int().nullable().meta({ description: 'The invitation whose connection it goes to (given), or the connectionless invitation made for it when neither contact_id nor invitation_id was sent' }),
    invitation_url: z.string().nullable().meta({ description: 'The connectionless invitation carrying the offer, when the exchange made one: show it to the holder (URL or QR)' }),
    thread_id: z.string().meta({ description: "The DIDComm thread (the offer's @id)" }),
    parent_thread_id: z.string().nullable().meta({ description: "The invitation's @id when the offer travels in it" }),
    role: z.literal('issuer'),
    initiator: z.literal('self'),
    state: z.enum(EXCHANGE_STATES).meta({ description: 'offer-sent → request-received → credential-issued → done; abandoned on a refused request, a problem report or a refusal at signing; credential-revoked once revoked' }),
    format: z.string().meta({ description: 'ld_proof (RFC 0593) or anoncreds (RFC 0771)' }),
    revocation_def_id: z.string().nullable().meta({ description: 'ld_proof: the status-list definition; anoncreds: the revocation registry id' }),
    error_msg: z.string().nullable().meta({ description: 'Why it was abandoned' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'CredentialExchange' });

export const jsonldIssuanceContracts = {
  issueJsonLdCredential: {
    query: z.object({
      timeout: z.coerce.number().min(0).max(MAX_TIMEOUT_SECONDS).optional().meta({ description: `Seconds to wait for the holder's request and the credential (0–${MAX_TIMEOUT_SECONDS}; default 0: answer at once)` }),
    }),
    body: z.object({
      credential: JsonObject.nullish().meta({ description: "The JSON-LD credential (required in practice): @context, type, issuer (one of this wallet's DIDs), credentialSubject, dates. Checked in safe mode against bundled contexts and this wallet's context files; never fetched" }),
      proofType: z.enum(PROOF_TYPES).nullish().meta({ description: 'Ed25519Signature2020 (default), Ed25519Signature2018, DataIntegrityProof. Aries holders (ACA-Py, Credo) take only the Ed25519 2018/2020 suites over ld_proof' }),
      cryptosuite: z.enum(CRYPTOSUITES).nullish().meta({ description: 'With DataIntegrityProof (not in the contract): eddsa-rdfc-2022 (default on Ed25519 keys) or ecdsa-rdfc-2019 (P-256)' }),
      verification_method: z.string().min(1).max(2048).nullish().meta({ description: "An assertion method of the issuer DID to sign with (not in the contract; default: the first the proof type's verifiers read)" }),
      contact_id: RecordId.nullish().meta({ description: 'An active connection of this wallet: the offer goes to it. With neither contact_id nor invitation_id: connectionless (RFC 0434 without handshake_protocols); the answer’s invitation_url carries the offer with our ~service, the first holder whose authcrypted request answers it gets the credential at its own ~service, no connection is made' }),
      invitation_id: z.number().int().min(1).max(MAX_INVITATION_ID).nullish().meta({ description: "One of this wallet's invitations: the offer goes to its connection, or to the first connection it produces" }),
      revocation_def_id: z.string().min(1).max(128).regex(/^[A-Za-z0-9._:-]+$/, 'a status-list definition id').nullish().meta({ description: 'A status-list definition: the credential carries a BitstringStatusListEntry' }),
      rule: z.string().max(1024).nullish().meta({ description: 'Refused (400 rule_not_supported): the contract gives it no meaning' }),
      comment: z.string().max(1024).nullish().meta({ description: 'Sent with the offer (not in the contract)' }),
    }),
    bodyOptional: true,
    response: z.array(ExchangeView),
    errors: [400, 401, 403, 404, 409],
  },
  listCredentialExchanges: { query: z.object({ ...PAGING_QUERY }), paged: true, response: z.array(ExchangeView), errors: [400, 401, 403] },
  getCredentialExchange: { params: z.strictObject({ id: RecordId }), response: ExchangeView, errors: [400, 401, 403, 404] },
  getJsonLdCredential: {
    params: z.strictObject({ id: RecordId }),
    response: JsonObject.meta({ title: 'JsonLdVerifiableCredential', description: 'The signed credential as issued (its proof included)' }),
    errors: [400, 401, 403, 404, 409],
  },
  getCredentialRecord: {
    params: z.strictObject({ id: RecordId }),
    response: z
      .object({
        cred_ex_record: ExchangeView,
        ld_proof: z
          .object({
            cred_ex_id: z.string(),
            offer: JsonObject.nullable().meta({ description: 'The offered ld-proof-vc-detail {credential, options}' }),
            request: JsonObject.nullable().meta({ description: "The holder's request, once received" }),
            credential: JsonObject.nullable().meta({ description: 'The issued credential' }),
            issuer_did: z.string().nullable(),
            proof_type: z.string().nullable(),
            cryptosuite: z.string().nullable(),
            verification_method: z.string().nullable(),
            created_at: Timestamp,
            updated_at: Timestamp,
          })
          .optional(),
        anoncreds: z
          .object({
            cred_ex_id: z.string(),
            schema_id: z.string().nullable(),
            cred_def_id: z.string().nullable(),
            rev_reg_id: z.string().nullable().meta({ description: 'The revocation registry (revocable definitions)' }),
            cred_rev_id: z.string().nullable().meta({ description: 'The revocation index in the registry (decimal), once issued' }),
            offer: JsonObject.nullable().meta({ description: 'The offered anoncreds/credential-offer@v1.0 {schema_id, cred_def_id, key_correctness_proof, nonce}' }),
            request: JsonObject.nullable().meta({ description: "The holder's credential request, once received" }),
            credential: JsonObject.nullable().meta({ description: 'The issued credential (values, signature, signature_correctness_proof; rev_reg and witness when revocable)' }),
            created_at: Timestamp,
            updated_at: Timestamp,
          })
          .optional(),
      })
      .meta({ title: 'CredentialRecord', description: "The exchange and its format's record, as ACA-Py's {cred_ex_record, ld_proof} and {cred_ex_record, anoncreds}" }),
    errors: [400, 401, 403, 404],
  },
} satisfies OperationContracts;
