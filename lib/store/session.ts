import { AsyncLocalStorage } from 'node:async_hooks';
import type { TenantScope } from './keys';

/**
 * Which credentials the adapters use for the work under way. Inside a wallet's session every data
 * and issuer-key call goes out with credentials scoped to that wallet (a role session tagged with its
 * id): a key built for another wallet is refused by IAM — or, locally, by the access guard — whatever
 * the handler code does. Outside one (authorizer, public lookups, super-admin, workers between
 * records) calls use the function's own narrow role.
 */
interface ActiveSession {
  readonly scope: TenantScope;
  /** The wallet's registry session (wallet creation): a role of its own, see {@link inRegistrySession}. */
  readonly registry: boolean;
}
const current = new AsyncLocalStorage<ActiveSession>();

/** The wallet whose session (of either kind) is active, if any. */
export function sessionWallet(): string | null {
  return current.getStore()?.scope.walletId ?? null;
}

/** Whether the active session is a registry session. */
export function inRegistry(): boolean {
  return current.getStore()?.registry ?? false;
}

export class SessionSwitchError extends Error {
  constructor(from: string, to: string) {
    super(`a session of wallet ${from} cannot act for wallet ${to}`);
    this.name = 'SessionSwitchError';
  }
}

/**
 * Runs `fn` in `scope`'s session. Entering the same wallet again is a no-op; entering another wallet
 * from inside a session throws, so code serving one wallet can never borrow another's credentials.
 * The router enters the caller's session for every wallet route; super-admin use cases, public
 * protocol endpoints and workers enter the session of the wallet they found.
 */
export function inSession<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
  const active = current.getStore();
  if (active) {
    if (active.scope.walletId !== scope.walletId) return Promise.reject(new SessionSwitchError(active.scope.walletId, scope.walletId));
    if (active.registry) return Promise.reject(new RegistrySessionError('a registry session cannot enter a wallet session'));
    return fn();
  }
  return current.run({ scope, registry: false }, fn);
}

export class RegistrySessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistrySessionError';
  }
}

/**
 * Runs `fn` in `scope`'s registry session: the function's registry role (lib/service/access.ts
 * `registry`), assumed with the wallet's tag, which may put only wallet-name reservations, public-reference
 * lookups and the wallet's own record — the writes of wallet creation, which no wallet session may make.
 * Entered only from outside any session, and nothing is entered from inside it: the code it runs is the
 * one transaction that needs it.
 */
export function inRegistrySession<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
  const active = current.getStore();
  if (active) return Promise.reject(new RegistrySessionError(`a registry session cannot be entered from a session of wallet ${active.scope.walletId}`));
  return current.run({ scope, registry: true }, fn);
}

/**
 * Runs `fn` with the function's own role, outside any wallet's session: for public, service-level
 * lookups made while serving a wallet (a verifier resolving an issuer DID this service publishes
 * reads the PublicDids index, which no wallet session may query). The role's own grants still apply.
 */
export function withOwnRole<T>(fn: () => Promise<T>): Promise<T> {
  return current.exit(fn);
}
