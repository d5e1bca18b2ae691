import { didWeb } from '../dids/methods';
import { isDidSyntax } from '../dids/records';
import { AppError } from '../http/errors';
import { Representation, type OperationImpls } from '../http/contract';
import { DOCUMENT_MEDIA_TYPES, RESOLUTION_RESULT_MEDIA_TYPE, type resolverContracts } from './contract';
import type { DidResolver, Resolved } from './resolver';

const RESOLUTION_CONTEXT = 'https://w3id.org/did-resolution/v1';

/** DID Resolution's error shape (W3C DID Resolution; what Universal Resolver clients read). */
function resolutionError(status: number, error: 'notFound' | 'invalidDid', message: string): AppError {
  return new AppError(status, error, message, undefined, {
    '@context': RESOLUTION_CONTEXT,
    didDocument: null,
    didResolutionMetadata: { error },
    didDocumentMetadata: {},
  });
}

function resultOf(r: Resolved) {
  return {
    '@context': RESOLUTION_CONTEXT,
    didDocument: r.document,
    didResolutionMetadata: { contentType: 'application/did+ld+json' },
    didDocumentMetadata: r.deactivatedAt ? { deactivated: true } : {},
  };
}

/** DID Resolution's HTTP binding answers a deactivated DID with 410 Gone and the result saying so. */
function gone(r: Resolved): AppError {
  return new AppError(410, 'deactivated', 'The DID is deactivated', undefined, resultOf(r));
}

const RESOLUTION_RESULT_TYPE = `${RESOLUTION_RESULT_MEDIA_TYPE};charset=utf-8`;

/** The media types an Accept header lists, parameters and quality values left aside. */
function mediaTypes(accept: string): string[] {
  return accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
}

export function resolverOperations(resolver: DidResolver): OperationImpls<typeof resolverContracts> {
  return {
    // DID Resolution's HTTP(S) binding, as the Universal Resolver speaks it: a DID document media type
    // asks for the document alone, anything else gets the resolution result.
    resolveDid: async ({ params, accept, baseUrl }) => {
      if (!isDidSyntax(params.did)) throw resolutionError(400, 'invalidDid', 'Not a DID, or longer than this service accepts');
      const resolved = await resolver.resolve(params.did, baseUrl);
      if (!resolved) throw resolutionError(404, 'notFound', `${params.did} is not a published DID of this service`);
      if (resolved.deactivatedAt) throw gone(resolved);
      const wanted = DOCUMENT_MEDIA_TYPES.find((t) => mediaTypes(accept).includes(t));
      if (wanted) return new Representation(resolved.document, wanted);
      const result = resultOf(resolved);
      return mediaTypes(accept).includes('application/ld+json') ? new Representation(result, RESOLUTION_RESULT_TYPE) : result;
    },
    getDidWebDocument: async ({ params, baseUrl }) => {
      const did = didWeb(baseUrl, params.id);
      const resolved = await resolver.resolve(did, baseUrl);
      if (!resolved) throw resolutionError(404, 'notFound', `${did} is not a published DID of this service`);
      if (resolved.deactivatedAt) throw gone(resolved);
      return resolved.document;
    },
  };
}
