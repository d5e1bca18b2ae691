import { walletScope, type OperationImpls } from '../http/contract';
import { listOrPage } from '../http/paging';
import type { oid4vciAdminContracts } from './contract';
import { exchangeView, type ExchangeService } from './exchanges';
import { draftFromGeneric, draftFromJwt, draftFromSdJwt, type SupportedCredentialService } from './supported';

export function oid4vciAdminOperations(supported: SupportedCredentialService, exchanges: ExchangeService): OperationImpls<typeof oid4vciAdminContracts> {
  return {
    listSupportedCredentials: async ({ caller, query }) => {
      const { limit, cursor, ...filters } = query;
      return listOrPage(
        query,
        () => supported.list(walletScope(caller), filters),
        (p) => supported.listPage(walletScope(caller), p, filters),
      );
    },
    createSupportedCredential: ({ caller, body }) => supported.create(walletScope(caller), draftFromGeneric(body)),
    createJwtSupportedCredential: ({ caller, body }) => supported.create(walletScope(caller), draftFromJwt(body)),
    createSdJwtSupportedCredential: ({ caller, body }) => supported.create(walletScope(caller), draftFromSdJwt(body)),
    getSupportedCredential: ({ caller, params }) => supported.get(walletScope(caller), params.supported_cred_id),
    deleteSupportedCredential: async ({ caller, params }) => {
      await supported.delete(walletScope(caller), params.supported_cred_id);
      return {};
    },
    listExchanges: async ({ caller, query }) => {
      const { limit, cursor, ...filters } = query;
      return listOrPage(
        query,
        async () => (await exchanges.list(walletScope(caller), filters)).map((r) => exchangeView(r)),
        async (p) => {
          const page = await exchanges.listPage(walletScope(caller), p, filters);
          return { items: page.items.map((r) => exchangeView(r)), next: page.next };
        },
      );
    },
    getExchange: async ({ caller, params }) => exchangeView(await exchanges.get(walletScope(caller), params.exchange_id)),
    deleteExchange: async ({ caller, params }) => {
      await exchanges.delete(walletScope(caller), params.exchange_id);
      return {};
    },
    issueCredentialOffer: ({ caller, body, baseUrl }) => exchanges.issue(walletScope(caller), body, baseUrl),
  };
}
