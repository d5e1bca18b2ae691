import { walletScope, type OperationImpls } from '../http/contract';
import { listOrPage } from '../http/paging';
import { tenantScope } from '../store/keys';
import { tenancyContracts } from './contract';
import type { TenancyService } from './service';

export function tenancyOperations(service: TenancyService): OperationImpls<typeof tenancyContracts> {
  return {
    createSubwallet: ({ body }) => service.createSubwallet(body),
    listSubwallets: ({ query }) => listOrPage(query, () => service.listSubwallets(), (p) => service.listSubwalletsPage(p)),
    getSubwallet: ({ params }) => service.getSubwallet(params.wallet_id),
    createApiKey: ({ body }) => service.createApiKey(body),
    revokeApiKey: async ({ body }) => {
      if (body.name !== undefined) return service.deleteApiKeyByName(body.wallet_id, body.name);
      await service.revokeApiKey(tenantScope(body.wallet_id), body.key_id!);
      return { status: 'API key revoked' };
    },
    getOwnWallet: ({ caller }) => service.getOwnWallet(walletScope(caller)),
    listOwnApiKeys: ({ caller }) => service.listOwnKeys(walletScope(caller)),
    getOwnApiKey: ({ caller, params }) => service.getOwnKey(walletScope(caller), params.key_id),
    revokeOwnApiKey: ({ caller, params }) => service.revokeOwnKey(walletScope(caller), params.key_id),
  };
}
