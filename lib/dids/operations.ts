import { AppError } from '../http/errors';
import { walletScope, type OperationImpls } from '../http/contract';
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

export function resolverOperations(dids: DidResolver): OperationImpls<typeof resolverContracts> {
  return {
    resolveDid: async ({ params }) => {
      const doc = await dids.resolve(params.did);
      if (!doc) throw notFound(params.did);
      return {
        '@context': 'https://w3id.org/did-resolution/v1',
        didDocument: doc,
        didResolutionMetadata: { contentType: 'application/did+ld+json' },
        didDocumentMetadata: {},
      };
    },
    getDidWebDocument: async ({ params, baseUrl }) => {
      const did = didWeb(baseUrl, params.id);
      const doc = await dids.resolve(did);
      if (!doc) throw notFound(did);
      return doc;
    },
  };
}
