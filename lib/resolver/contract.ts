import * as z from 'zod';
import { ErrorBodySchema, type OperationContracts } from '../http/contract';

/** A DID document (DID Core); lib/dids/document.ts builds them. */
const DidDocument = z
  .looseObject({
    '@context': z.array(z.string()),
    id: z.string(),
    verificationMethod: z.array(z.looseObject({ id: z.string(), type: z.string(), controller: z.string() })),
    service: z
      .array(z.looseObject({ id: z.string(), type: z.string(), serviceEndpoint: z.string() }))
      .optional()
      .meta({ description: "A wallet's current public DID (sov, indy, web): its DIDComm v1 `did-communication` service (docs/didcomm.md)" }),
  })
  .meta({ id: 'DidDocument' });

const DidResolutionResult = z
  .object({
    '@context': z.string(),
    didDocument: DidDocument,
    didResolutionMetadata: z.object({ contentType: z.string() }),
    didDocumentMetadata: z.object({ deactivated: z.boolean().optional() }),
  })
  .meta({ id: 'DidResolutionResult', description: 'DID Resolution result; with didDocumentMetadata.deactivated true (and 410) once the DID is deactivated' });

/** DID Resolution's error result, what Universal Resolver clients read (not the service's {error, code}). */
const DidResolutionError = z
  .object({
    '@context': z.string(),
    didDocument: z.null(),
    didResolutionMetadata: z.object({ error: z.enum(['notFound', 'invalidDid']) }),
    didDocumentMetadata: z.object({}),
  })
  .meta({ id: 'DidResolutionError' });

/** DID Resolution's HTTP binding: these ask for the document alone... */
export const DOCUMENT_MEDIA_TYPES = ['application/did+ld+json', 'application/did+json'] as const;
/** ...and this for the resolution result as JSON-LD (plain application/json gets it too). */
export const RESOLUTION_RESULT_MEDIA_TYPE = 'application/ld+json;profile="https://w3id.org/did-resolution"';

/** Schemas of the public resolution routes. Up to 8192 characters reach the resolver, which answers an invalid DID with DID Resolution's `invalidDid`; longer is the router's 400. */
export const resolverContracts = {
  resolveDid: {
    params: z.strictObject({ did: z.string().min(1).max(8192).meta({ description: 'A DID (did:sov nyms also bare), as sent or percent-encoded' }) }),
    response: DidResolutionResult,
    negotiated: {
      [RESOLUTION_RESULT_MEDIA_TYPE]: DidResolutionResult,
      ...Object.fromEntries(DOCUMENT_MEDIA_TYPES.map((type) => [type, DidDocument])),
    },
    errors: [400, 404, 410],
    // A DID over 8192 characters or a malformed %-escape fails before the resolver: {error, code}.
    errorBodies: { 400: z.union([DidResolutionError, ErrorBodySchema]), 404: DidResolutionError, 410: DidResolutionResult },
  },
  getDidWebDocument: {
    params: z.strictObject({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{16,32}$/, 'not a did:web id of this service') }),
    response: DidDocument,
    errors: [400, 404, 410],
    errorBodies: { 404: DidResolutionError, 410: DidResolutionResult },
  },
} satisfies OperationContracts;
