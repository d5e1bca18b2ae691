import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { OAuthError } from '../oid4vci/protocol/contract';
import { PublicRefPath, Timestamp } from '../tenancy/contract';
import { PRESENTATION_STATES, REQUEST_LIFETIME } from './records';
import { INVALID_REASONS, TRUST_REASONS } from './verification/types';
import { MAX_TRUSTED_ISSUER_LENGTH, MAX_TRUSTED_ISSUERS } from './verification/trust';

/**
 * Schemas of the OID4VP routes (contract 4.5) and the public verifier endpoints. Definitions and
 * DCQL queries are kept loose here: lib/oid4vp/query checks them and names each bad path.
 */
const JsonObject = z.record(z.string(), z.unknown());
const RecordId = z.string().min(1).max(128);
const Deleted = z.object({}).meta({ description: 'Empty object: deleted' });

const PresDef = JsonObject.meta({ title: 'PresentationDefinition', description: 'DIF Presentation Exchange v2 definition (contract 2.4): id, purpose, format, input_descriptors with constraints.fields and limit_disclosure' });

const DefinitionView = z
  .object({ pres_def_id: z.string(), wallet_id: z.string(), pres_def: PresDef, created_at: Timestamp, updated_at: Timestamp })
  .meta({ title: 'PresentationDefinitionRecord' });

const VpFormats = z
  .record(z.string(), z.record(z.string(), z.array(z.string().max(50)).max(20).readonly()))
  .meta({ description: 'Keyed by format (vc+sd-jwt, dc+sd-jwt, jwt_vc_json, jwt_vp_json); SD-JWT: sd-jwt_alg_values and kb-jwt_alg_values; JWT: alg (or alg_values). Algorithms verified: ES256, EdDSA' });

const Matched = z
  .object({
    format: z.string(),
    issuer: z.string(),
    vct: z.string().optional(),
    types: z.array(z.string()).readonly().optional(),
    claims: JsonObject.meta({ description: 'The credential’s claims as verified (disclosed ones in place)' }),
    disclosed: z.array(z.string()).readonly().meta({ description: 'JSON pointers of the selectively disclosable claims the holder disclosed' }),
    issuer_trust: z.enum(TRUST_REASONS).meta({
      description:
        'Why the issuer is trusted: own_did (a DID of this wallet), trusted_issuers_setting (listed in /api/v1/settings/trusted-issuers), pinned_by_request (an iss filter of the definition or DCQL values), any_issuer (the setting is ["*"]) — not in the contract',
    }),
  })
  .meta({ title: 'MatchedCredential' });

const Reason = z
  .object({ code: z.enum([...(Object.keys(INVALID_REASONS) as [keyof typeof INVALID_REASONS]), 'wallet_error']), detail: z.string(), credential_id: z.string().optional() })
  .meta({ title: 'PresentationInvalidReason' });

const PresentationView = z
  .object({
    presentation_id: z.string(),
    pres_def_id: z.string().nullable().meta({ description: 'null for a request made from a DCQL query' }),
    request_id: z.string(),
    wallet_id: z.string(),
    state: z.enum(PRESENTATION_STATES),
    matched_credentials: z.record(z.string(), Matched).nullable().meta({ description: 'Input descriptor id (or DCQL credential id) → the credential as verified' }),
    verified: z.boolean().nullable(),
    errors: z.array(Reason).readonly().nullable().meta({ description: 'Why the presentation is presentation-invalid (not in the contract)' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'Presentation' });

const RequestView = z
  .object({
    request_id: z.string(),
    pres_def_id: z.string().nullable(),
    vp_formats: VpFormats,
    dcql_query: JsonObject.meta({ description: 'The DCQL query 1.0 wallets are asked (translated from the definition, or as given)' }),
    expires_at: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'PresentationRequest' });

const TrustedIssuers = z.array(z.string()).meta({ description: 'Issuers whose credentials the verifier accepts (DIDs, https issuer URLs), or ["*"] for any issuer' });

export const oid4vpAdminContracts = {
  getTrustedIssuers: { response: TrustedIssuers, errors: [401, 403] },
  putTrustedIssuers: {
    body: z.strictObject({
      issuers: z
        .array(z.string().max(MAX_TRUSTED_ISSUER_LENGTH))
        .max(MAX_TRUSTED_ISSUERS)
        .meta({
          description: `Replaces the list: DIDs or https issuer URLs (at most ${MAX_TRUSTED_ISSUERS}, each at most ${MAX_TRUSTED_ISSUER_LENGTH} characters), compared exactly; ["*"] accepts any issuer (dangerous) — not in the contract`,
        }),
    }),
    response: TrustedIssuers,
    errors: [400, 401, 403],
  },
  listPresentationDefinitions: { query: z.object({ ...PAGING_QUERY }), paged: true, response: z.array(DefinitionView), errors: [400, 401, 403] },
  createPresentationDefinition: { body: z.strictObject({ pres_def: JsonObject }), response: DefinitionView, errors: [400, 401, 403] },
  getPresentationDefinition: { params: z.strictObject({ pres_def_id: RecordId }), response: DefinitionView, errors: [400, 401, 403, 404] },
  deletePresentationDefinition: { params: z.strictObject({ pres_def_id: RecordId }), response: Deleted, errors: [400, 401, 403, 404] },
  listPresentations: {
    query: z.object({ state: z.enum(PRESENTATION_STATES).optional(), pres_def_id: RecordId.optional(), ...PAGING_QUERY }),
    paged: true,
    response: z.array(PresentationView),
    errors: [400, 401, 403],
  },
  getPresentation: { params: z.strictObject({ presentation_id: RecordId }), response: PresentationView, errors: [400, 401, 403, 404] },
  deletePresentation: { params: z.strictObject({ presentation_id: RecordId }), response: Deleted, errors: [400, 401, 403, 404] },
  createPresentationRequest: {
    body: z.strictObject({
      pres_def_id: RecordId.optional().meta({ description: 'A stored presentation definition (or give dcql_query)' }),
      dcql_query: JsonObject.optional().meta({ description: 'An OpenID4VP 1.0 DCQL query instead of a definition — not in the contract' }),
      vp_formats: VpFormats,
      did: z.string().max(1000).optional().meta({ description: "The verifier DID that signs the request (did:key, did:jwk or published did:web); default the wallet's public DID — not in the contract" }),
      expires_in: z.number().int().min(REQUEST_LIFETIME.min).max(REQUEST_LIFETIME.max).optional().meta({ description: `Seconds the request can be answered (default ${REQUEST_LIFETIME.default}) — not in the contract` }),
    }),
    response: z.object({
      request_uri: z.string().meta({ description: 'openid:// URI with client_id (decentralized_identifier:<did>) and the URL-encoded request_uri (OpenID4VP 1.0, DCQL)' }),
      request_uri_draft: z.string().optional().meta({ description: 'For a definition: the same request for draft-era wallets (client_id the bare DID, presentation_definition) — not in the contract' }),
      request: RequestView,
      presentation: PresentationView,
    }),
    errors: [400, 401, 403, 404],
  },
} satisfies OperationContracts;

const PublicParams = z.strictObject({ public_ref: PublicRefPath, presentation_id: z.uuid().meta({ description: 'The presentation the request belongs to' }) });
const oauthErrors = { 400: OAuthError, 413: OAuthError } as const;

export const oid4vpPublicContracts = {
  getRequestObject: {
    params: PublicParams,
    query: z.object({ profile: z.enum(['v1', 'draft']).optional().meta({ description: 'draft: the Presentation Exchange form for draft-era wallets' }) }),
    mediaTypes: ['application/oauth-authz-req+jwt'],
    response: z.string().meta({ description: 'The signed request object (JWT, typ oauth-authz-req+jwt)' }),
    errors: [400, 404],
    errorBodies: { 400: OAuthError },
  },
  postPresentationResponse: {
    params: PublicParams,
    body: z.record(z.string(), z.string()),
    response: z.object({}).meta({ description: 'Received and verified (presentation-valid)' }),
    errors: [400, 404],
    errorBodies: oauthErrors,
  },
} satisfies OperationContracts;
