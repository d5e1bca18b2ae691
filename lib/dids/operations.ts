import { walletScope, type OperationImpls } from '../http/contract';
import { Paged } from '../http/paging';
import type { didContracts } from './contract';
import type { DidMethod, KeyType } from './methods';
import { didView } from './records';
import type { DidService } from './service';

export function didOperations(dids: DidService): OperationImpls<typeof didContracts> {
  return {
    createDid: async ({ caller, body, baseUrl }) => {
      const d = await dids.create(walletScope(caller), { method: (body.method ?? 'sov') as DidMethod, keyType: body.options?.key_type as KeyType | undefined, baseUrl });
      return { did: didView(d) };
    },
    createIndyDid: async ({ caller, baseUrl }) => ({ did: (await dids.create(walletScope(caller), { method: 'indy', baseUrl })).did }),
    setPublicDid: async ({ caller, query }) => ({ result: didView(await dids.setPublic(walletScope(caller), query.DID)) }),
    listDids: async ({ caller, query }) => {
      const method = query.method as DidMethod | undefined;
      if (query.limit === undefined && query.cursor === undefined) return (await dids.list(walletScope(caller), method)).map(didView);
      const page = await dids.listPage(walletScope(caller), { limit: query.limit, cursor: query.cursor, method });
      return new Paged(page.items.map(didView), page.next);
    },
    getDid: async ({ caller, params }) => didView(await dids.get(walletScope(caller), params.did)),
    deactivateDid: async ({ caller, params }) => didView(await dids.deactivate(walletScope(caller), params.did)),
    getPublicDid: async ({ caller }) => {
      const d = await dids.publicDid(walletScope(caller));
      return { result: d ? didView(d) : null };
    },
  };
}
