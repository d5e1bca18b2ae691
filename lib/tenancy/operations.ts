import type { Caller, OperationImpls } from '../http/contract';
import { tenantScope, type TenantScope } from '../store/keys';
import { tenancyContracts } from './contract';
import type { TenancyService } from './service';

/** The router guarantees the caller kind per route's auth kind; this narrows the type for the compiler. */
function scopeOf(caller: Caller): TenantScope {
  if (caller.kind !== 'wallet') throw new Error('wallet route reached without a wallet caller');
  return caller.scope;
}

export function tenancyOperations(service: TenancyService): OperationImpls<typeof tenancyContracts> {
  return {
    createSubwallet: ({ body }) => service.createSubwallet(body),
    listSubwallets: () => service.listSubwallets(),
    getSubwallet: ({ params }) => service.getSubwallet(params.wallet_id),
    createApiKey: ({ body }) => service.createApiKey(body),
    revokeApiKey: async ({ body }) => {
      if (body.name !== undefined) return service.deleteApiKeyByName(body.wallet_id, body.name);
      await service.revokeApiKey(tenantScope(body.wallet_id), body.key_id!);
      return { status: 'API key revoked' };
    },
    getOwnWallet: ({ caller }) => service.getOwnWallet(scopeOf(caller)),
    listOwnApiKeys: ({ caller }) => service.listOwnKeys(scopeOf(caller)),
    getOwnApiKey: ({ caller, params }) => service.getOwnKey(scopeOf(caller), params.key_id),
    revokeOwnApiKey: ({ caller, params }) => service.revokeOwnKey(scopeOf(caller), params.key_id),
  };
}
