import { likeMatches } from '../service/access';
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
  return { principal: 'wallet', wallet_id: p.walletId, key_id: p.keyId ?? '', via: p.via, roles: p.roles.join(','), expires_at: p.expiresAt ?? '' };
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
      expiresAt: typeof ctx.expires_at === 'string' && ctx.expires_at !== '' ? Date.parse(ctx.expires_at) : null,
    };
  }
  return { kind: 'anonymous' };
}

/**
 * From `arn:aws:execute-api:region:account:apiId/stage/METHOD/path` to the same API and stage with
 * wildcards for method and path: one cached decision then serves every route.
 */
export function wholeStageResource(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  if (!apiArn?.startsWith('arn:') || !stage) throw new Error('unexpected methodArn');
  return `${apiArn}/${stage}/*/*`;
}

/** How API Gateway matches an execute-api policy resource (with `*` wildcards) against a method ARN. */
export function policyResourceMatches(resource: string, methodArn: string): boolean {
  return likeMatches(resource, methodArn);
}
