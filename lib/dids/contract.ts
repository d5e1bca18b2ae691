import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { DID_METHODS } from './methods';
import { isDidSyntax, MAX_DID_LENGTH } from './records';

/** Schemas of the DID routes (contract 4.9 and the reads and deactivation beside it). */

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
      deactivated_at: z.string().optional().meta({ description: 'Set once deactivated: the DID resolves as deactivated' }),
      key_deletion_date: z.string().optional().meta({ description: "When the DID's key is destroyed ('scheduled' if the key service did not say)" }),
    }),
  })
  .meta({ title: 'DidRecord' });

const DidParam = z
  .string()
  .max(MAX_DID_LENGTH, { error: `at most ${MAX_DID_LENGTH} characters`, abort: true })
  .refine(isDidSyntax, 'not a DID (did:<method>:<id>, ASCII) or a did:sov nym')
  .meta({ description: 'A DID (did:sov nyms also bare)' });

export const didContracts = {
  createDid: {
    body: z.strictObject({
      method: z.enum(DID_METHODS as [string, ...string[]]).optional().meta({ description: 'Default sov' }),
      options: z.strictObject({ key_type: z.enum(['ed25519', 'p256']).optional() }).optional(),
    }),
    bodyOptional: true,
    response: z.object({ did: DidRecordView }),
    errors: [400, 401, 403, 409, 429, 503],
  },
  createIndyDid: { body: z.strictObject({}), bodyOptional: true, response: z.object({ did: z.string() }), errors: [401, 403, 409, 429, 503] },
  setPublicDid: {
    query: z.object({ DID: DidParam }),
    response: z.object({ result: DidRecordView }),
    errors: [400, 401, 403, 404, 409],
  },
  listDids: {
    query: z.object({ method: z.enum(DID_METHODS as [string, ...string[]]).optional(), ...PAGING_QUERY }),
    paged: true,
    response: z.array(DidRecordView),
    errors: [400, 401, 403],
  },
  getPublicDid: { response: z.object({ result: DidRecordView.nullable() }), errors: [401, 403] },
  getDid: { params: z.strictObject({ did: DidParam }), response: DidRecordView, errors: [400, 401, 403, 404] },
  deactivateDid: { params: z.strictObject({ did: DidParam }), response: DidRecordView, errors: [400, 401, 403, 404, 409, 503] },
} satisfies OperationContracts;
