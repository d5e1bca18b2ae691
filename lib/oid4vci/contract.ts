import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { Timestamp } from '../tenancy/contract';
import { CODE_LIFETIME, PIN } from './exchanges';
import { EXCHANGE_STATES, SUPPORTED_FORMATS } from './records';
import { VALUE_TYPES } from './supported';

/** Schemas of the OID4VCI admin routes (contract 4.4). Claim trees and sd_list are checked in supported.ts, naming each path. */

const StringList = z.array(z.string().max(500)).max(100);
const JsonObject = z.record(z.string(), z.unknown());

const Display = z
  .looseObject({
    name: z.string().optional(),
    locale: z.string().optional(),
    text_color: z.string().optional(),
    background_color: z.string().optional(),
    logo: z.looseObject({ url: z.string().optional(), uri: z.string().optional(), alt_text: z.string().optional() }).optional(),
  })
  .meta({ title: 'DisplayEntry' });
const DisplayList = z.array(Display).max(50);

const Identifier = z
  .string()
  .regex(/^[!-~]{1,200}$/, '1–200 printable ASCII characters, no spaces')
  .meta({ description: 'The credential configuration id wallets see (unique in the wallet)' });

const Claims = JsonObject.meta({
  description: `Claims keyed by name. A leaf is {mandatory?: boolean, value_type?: ${VALUE_TYPES.join('|')}|image/<subtype>, display?}; any other object is a group of claims (any depth; keys may be numbers, "0", "1", for array items).`,
});

const common = {
  id: Identifier,
  cryptographic_binding_methods_supported: StringList.nullish().meta({ description: 'For example did:key, did:jwk, jwk' }),
  cryptographic_suites_supported: StringList.nullish().meta({ description: 'Credential signing algorithms (EdDSA, ES256)' }),
  display: DisplayList.nullish(),
};

const SupportedView = z
  .object({
    supported_cred_id: z.string(),
    wallet_id: z.string(),
    identifier: z.string(),
    format: z.enum(SUPPORTED_FORMATS),
    format_data: JsonObject.nullable(),
    vc_additional_data: JsonObject.nullable(),
    cryptographic_binding_methods_supported: z.array(z.string()).nullable(),
    cryptographic_suites_supported: z.array(z.string()).nullable(),
    display: z.array(Display).nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'SupportedCredential' });

const ExchangeView = z
  .object({
    exchange_id: z.string(),
    supported_cred_id: z.string(),
    wallet_id: z.string(),
    state: z.enum(EXCHANGE_STATES),
    pin: z.string().nullable(),
    credential_subject: JsonObject,
    verification_method: z.string().meta({ description: 'DID URL of the signing key' }),
    issuer_id: z.string().meta({ description: 'The issuer DID (fully qualified)' }),
    code: z.string().meta({ description: 'The pre-authorized code' }),
    nonce: z.string().nullable(),
    token: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'Exchange' });

const Offer = z
  .object({
    credential_issuer: z.string(),
    credentials: z.array(z.string()).meta({ description: 'Draft 11 name of credential_configuration_ids' }),
    credential_configuration_ids: z.array(z.string()),
    grants: z.record(
      z.string(),
      z.object({
        'pre-authorized_code': z.string(),
        user_pin_required: z.boolean(),
        tx_code: z.object({ input_mode: z.enum(['numeric', 'text']), length: z.number().int(), description: z.string() }).optional(),
      }),
    ),
  })
  .meta({ title: 'CredentialOffer' });

const RecordId = z.string().min(1).max(128);
const Deleted = z.object({}).meta({ description: 'Empty object: deleted' });

export const oid4vciAdminContracts = {
  listSupportedCredentials: {
    query: z.object({ supported_cred_id: RecordId.optional(), format: z.enum(SUPPORTED_FORMATS).optional(), identifier: z.string().max(200).optional(), ...PAGING_QUERY }),
    paged: true,
    response: z.array(SupportedView),
    errors: [400, 401, 403],
  },
  createSupportedCredential: {
    body: z.strictObject({
      format: z.enum(SUPPORTED_FORMATS),
      ...common,
      format_data: JsonObject.nullish().meta({ description: 'Stored as given (display and binding methods given here stay here)' }),
      vc_additional_data: JsonObject.nullish(),
    }),
    response: SupportedView,
    errors: [400, 401, 403, 409],
  },
  createJwtSupportedCredential: {
    body: z.strictObject({
      format: z.literal('jwt_vc_json').optional().meta({ description: 'Default jwt_vc_json' }),
      ...common,
      type: z.union([z.string(), StringList.min(1)]).meta({ description: 'Credential types; must include VerifiableCredential' }),
      '@context': StringList.min(1).meta({ description: 'Starts with the VC 1.1 or 2.0 context' }),
      credentialSubject: Claims,
      order: StringList.nullish(),
    }),
    response: SupportedView,
    errors: [400, 401, 403, 409],
  },
  createSdJwtSupportedCredential: {
    body: z.strictObject({
      format: z.enum(['vc+sd-jwt', 'dc+sd-jwt']).optional().meta({ description: 'Default vc+sd-jwt' }),
      ...common,
      vct: z.string().min(1).max(2048),
      claims: Claims,
      order: StringList.nullish(),
      sd_list: StringList.nullish().meta({ description: 'JSON pointers (RFC 6901) of selectively disclosable claims; never /iss, /nbf, /exp, /iat, /vct, /cnf…, /status…' }),
    }),
    response: SupportedView,
    errors: [400, 401, 403, 409],
  },
  getSupportedCredential: { params: z.strictObject({ supported_cred_id: RecordId }), response: SupportedView, errors: [400, 401, 403, 404] },
  deleteSupportedCredential: { params: z.strictObject({ supported_cred_id: RecordId }), response: Deleted, errors: [400, 401, 403, 404] },
  listExchanges: {
    query: z.object({ exchange_id: RecordId.optional(), state: z.enum(EXCHANGE_STATES).optional(), supported_cred_id: RecordId.optional(), ...PAGING_QUERY }),
    paged: true,
    response: z.array(ExchangeView),
    errors: [400, 401, 403],
  },
  getExchange: { params: z.strictObject({ exchange_id: RecordId }), response: ExchangeView, errors: [400, 401, 403, 404] },
  deleteExchange: { params: z.strictObject({ exchange_id: RecordId }), response: Deleted, errors: [400, 401, 403, 404] },
  issueCredentialOffer: {
    body: z.strictObject({
      supported_cred_id: RecordId,
      credential_subject: JsonObject.optional().meta({ description: 'Claims to issue, checked against the supported credential' }),
      did: z.string().max(1000).optional().meta({ description: "Issuer DID of this wallet (did:sov nyms also bare); default the wallet's public DID" }),
      verification_method: z.string().max(2000).optional().meta({ description: "DID URL of the signing method; default the DID's key" }),
      pin: z.string().regex(PIN, '1–16 letters or digits').optional().meta({ description: 'Transaction code the holder must enter (offer: tx_code)' }),
      expires_in: z
        .number()
        .int()
        .min(CODE_LIFETIME.min)
        .max(CODE_LIFETIME.max)
        .optional()
        .meta({ description: `Seconds the pre-authorized code lives (default ${CODE_LIFETIME.default}) — not in the contract` }),
    }),
    response: z.object({
      offer: Offer,
      credential_offer: z.string().meta({ description: 'openid-credential-offer:// URI carrying the offer' }),
      credential_offer_uri: z.string().meta({ description: 'openid-credential-offer:// URI carrying the offer by reference (short QR codes) — not in the contract' }),
      exchange: ExchangeView,
    }),
    errors: [400, 401, 403, 404],
  },
} satisfies OperationContracts;
