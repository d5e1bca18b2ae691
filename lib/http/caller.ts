import type { Principal } from '../tenancy/authenticate';
import { isWalletId, tenantScope } from '../store/keys';
import type { Caller } from './contract';

/**
 * The authorizer's context travels as flat string values (API Gateway's rule); these two functions
 * are the only encoder and decoder of it.
 */
export type AuthorizerContext = Record<string, string>;

export function principalToContext(p: Principal): AuthorizerContext {
  if (p.kind === 'superadmin') return { principal: 'superadmin', key_id: p.keyId };
  return { principal: 'wallet', wallet_id: p.walletId, key_id: p.keyId ?? '', via: p.via, roles: p.roles.join(',') };
}

export function callerFromContext(ctx: Record<string, unknown> | null | undefined): Caller {
  if (!ctx) return { kind: 'anonymous' };
  if (ctx.principal === 'superadmin' && typeof ctx.key_id === 'string') return { kind: 'superadmin', keyId: ctx.key_id };
  if (ctx.principal === 'wallet' && typeof ctx.wallet_id === 'string' && isWalletId(ctx.wallet_id)) {
    return {
      kind: 'wallet',
      scope: tenantScope(ctx.wallet_id),
      keyId: typeof ctx.key_id === 'string' && ctx.key_id !== '' ? ctx.key_id : null,
      via: ctx.via === 'token' ? 'token' : 'api_key',
    };
  }
  return { kind: 'anonymous' };
}
