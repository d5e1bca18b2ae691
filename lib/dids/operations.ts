import { AppError } from '../http/errors';
import { Representation, walletScope, type OperationImpls } from '../http/contract';
import type { TaaService } from '../taa/service';
import type { didContracts, resolverContracts } from './contract';
import type { DidMethod, KeyType } from './methods';
import { didView } from './records';
import type { DidService } from './service';
import type { DidResolver } from './resolver';
import { didWeb } from './methods';

export function didOperations(dids: DidService, taa: TaaService): OperationImpls<typeof didContracts> {
  return {
    createDid: async ({ caller, body, baseUrl }) => {
      const d = await dids.create(walletScope(caller), { method: (body.method ?? 'sov') as DidMethod, keyType: body.options?.key_type as KeyType | undefined, baseUrl });
      return { did: didView(d) };
    },
    createIndyDid: async ({ caller, baseUrl }) => ({ did: (await dids.create(walletScope(caller), { method: 'indy', baseUrl })).did }),
    setPublicDid: async ({ caller, query }) => ({ result: didView(await dids.setPublic(walletScope(caller), query.DID)) }),
    listDids: async ({ caller, query }) => (await dids.list(walletScope(caller), query.method as DidMethod | undefined)).map(didView),
    getDid: async ({ caller, params }) => didView(await dids.get(walletScope(caller), params.did)),
    getPublicDid: async ({ caller }) => {
      const d = await dids.publicDid(walletScope(caller));
      return { result: d ? didView(d) : null };
    },
    fetchTaa: ({ caller }) => taa.fetch(walletScope(caller)),
    acceptTaa: ({ caller, body }) => taa.accept(walletScope(caller), body),
  };
}

/** DID Resolution's error shape (W3C DID Resolution; what Universal Resolver clients read). */
function notFound(did: string): AppError {
  return new AppError(404, 'notFound', `${did} is not a published DID of this service`, undefined, {
    '@context': 'https://w3id.org/did-resolution/v1',
    didDocument: null,
    didResolutionMetadata: { error: 'notFound' },
    didDocumentMetadata: {},
  });
}

const DOCUMENT_MEDIA_TYPES = ['application/did+ld+json', 'application/did+json'] as const;
const RESOLUTION_RESULT_TYPE = 'application/ld+json;profile="https://w3id.org/did-resolution";charset=utf-8';

/** The media types an Accept header lists, parameters and quality values left aside. */
function mediaTypes(accept: string): string[] {
  return accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
}

export function resolverOperations(dids: DidResolver): OperationImpls<typeof resolverContracts> {
  return {
    // DID Resolution's HTTP(S) binding, as the Universal Resolver speaks it: a DID document media type
    // asks for the document alone, anything else gets the resolution result.
    resolveDid: async ({ params, accept }) => {
      const doc = await dids.resolve(params.did);
      if (!doc) throw notFound(params.did);
      const wanted = DOCUMENT_MEDIA_TYPES.find((t) => mediaTypes(accept).includes(t));
      if (wanted) return new Representation(doc, wanted);
      const result = {
        '@context': 'https://w3id.org/did-resolution/v1',
        didDocument: doc,
        didResolutionMetadata: { contentType: 'application/did+ld+json' },
        didDocumentMetadata: {},
      };
      return mediaTypes(accept).includes('application/ld+json') ? new Representation(result, RESOLUTION_RESULT_TYPE) : result;
    },
    getDidWebDocument: async ({ params, baseUrl }) => {
      const did = didWeb(baseUrl, params.id);
      const doc = await dids.resolve(did);
      if (!doc) throw notFound(did);
      return doc;
    },
  };
}
