import * as z from 'zod';
import type { OperationContracts } from '../http/contract';

/** Schemas of the public resolution routes. Any string is taken: an invalid DID gets DID Resolution's own `invalidDid`. */
export const resolverContracts = {
  resolveDid: {
    params: z.strictObject({ did: z.string().min(1).max(8192).meta({ description: 'A DID (did:sov nyms also bare), as sent or percent-encoded' }) }),
    response: z
      .object({
        '@context': z.string(),
        didDocument: z.record(z.string(), z.unknown()),
        didResolutionMetadata: z.object({ contentType: z.string() }),
        didDocumentMetadata: z.object({ deactivated: z.boolean().optional() }),
      })
      .meta({ title: 'DidResolutionResult' }),
    errors: [400, 404, 410],
  },
  getDidWebDocument: {
    params: z.strictObject({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{16,32}$/, 'not a did:web id of this service') }),
    response: z.record(z.string(), z.unknown()).meta({ title: 'DidDocument' }),
    errors: [400, 404, 410],
  },
} satisfies OperationContracts;
