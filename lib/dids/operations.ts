import { walletScope, type OperationImpls } from '../http/contract';
import { listOrPage } from '../http/paging';
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
      return listOrPage(
        query,
        async () => (await dids.list(walletScope(caller), method)).map(didView),
        async (p) => {
          const page = await dids.listPage(walletScope(caller), { ...p, method });
          return { items: page.items.map(didView), next: page.next };
        },
      );
    },
    getDid: async ({ caller, params }) => didView(await dids.get(walletScope(caller), params.did)),
    deactivateDid: async ({ caller, params }) => didView(await dids.deactivate(walletScope(caller), params.did)),
    getPublicDid: async ({ caller }) => {
      const d = await dids.publicDid(walletScope(caller));
      return { result: d ? didView(d) : null };
    },
  };
}
