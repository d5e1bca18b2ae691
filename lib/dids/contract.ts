import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { DID_METHODS } from './methods';

/** Schemas of the DID (contract 4.9), resolver and TAA (contract 4.11) routes. */

export const DidRecordView = z
  .object({
    did: z.string(),
    verkey: z.string().meta({ description: 'base58 of the raw public key (Ed25519: 32 bytes; P-256: compressed point)' }),
    posture: z.enum(['wallet_only', 'public', 'posted']),
    key_type: z.enum(['ed25519', 'p256']),
    method: z.enum(DID_METHODS as [string, ...string[]]),
    metadata: z.object({
      kid: z.string().meta({ description: 'DID URL of the signing key (JWS kid)' }),
      public_jwk: z.object({ kty: z.enum(['OKP', 'EC']), crv: z.enum(['Ed25519', 'P-256']), x: z.string(), y: z.string().optional() }),
      created_at: z.string(),
      published_at: z.string().optional(),
    }),
  })
  .meta({ title: 'DidRecord' });

const DidParam = z.string().min(7).max(2048).meta({ description: 'A DID (did:sov nyms also bare)' });

const TaaView = z
  .object({
    taa_required: z.boolean(),
    taa_record: z.object({ text: z.string(), version: z.string(), digest: z.string() }).nullable(),
    aml_record: z.object({ version: z.string(), aml: z.record(z.string(), z.string()) }).nullable(),
    taa_accepted: z.object({ mechanism: z.string(), time: z.number().int(), version: z.string(), digest: z.string() }).nullable(),
  })
  .meta({ title: 'Taa' });

export const didContracts = {
  createDid: {
    body: z.strictObject({
      method: z.enum(DID_METHODS as [string, ...string[]]).optional().meta({ description: 'Default sov' }),
      options: z.strictObject({ key_type: z.enum(['ed25519', 'p256']).optional() }).optional(),
    }),
    response: z.object({ did: DidRecordView }),
    errors: [400, 401, 403, 503],
  },
  createIndyDid: { body: z.strictObject({}), response: z.object({ did: z.string() }), errors: [401, 403, 503] },
  setPublicDid: {
    query: z.object({ DID: DidParam }),
    response: z.object({ result: DidRecordView }),
    errors: [400, 401, 403, 404, 409],
  },
  listDids: {
    query: z.object({ method: z.enum(DID_METHODS as [string, ...string[]]).optional() }),
    response: z.array(DidRecordView),
    errors: [400, 401, 403],
  },
  getPublicDid: { response: z.object({ result: DidRecordView.nullable() }), errors: [401, 403] },
  getDid: { params: z.strictObject({ did: DidParam }), response: DidRecordView, errors: [400, 401, 403, 404] },
  fetchTaa: { response: z.object({ taa: TaaView }), errors: [401, 403] },
  acceptTaa: {
    body: z.strictObject({ mechanism: z.string().min(1).max(200), text: z.string().max(100_000).optional(), version: z.string().max(64).optional() }),
    response: z.object({ taa: TaaView }),
    errors: [400, 401, 403, 409],
  },
} satisfies OperationContracts;

export const resolverContracts = {
  resolveDid: {
    params: z.strictObject({ did: DidParam }),
    response: z
      .object({
        '@context': z.string(),
        didDocument: z.record(z.string(), z.unknown()),
        didResolutionMetadata: z.object({ contentType: z.string() }),
        didDocumentMetadata: z.record(z.string(), z.unknown()),
      })
      .meta({ title: 'DidResolutionResult' }),
    errors: [400, 404],
  },
  getDidWebDocument: {
    params: z.strictObject({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{16,32}$/, 'not a did:web id of this service') }),
    response: z.record(z.string(), z.unknown()).meta({ title: 'DidDocument' }),
    errors: [400, 404],
  },
} satisfies OperationContracts;
