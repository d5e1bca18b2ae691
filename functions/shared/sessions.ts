import { STSClient } from '@aws-sdk/client-sts';
import { WalletSessions } from '../../lib/adapters/wallet-sessions';
import type { Config } from '../../lib/config';
import type { FunctionName } from '../../lib/service/access';
import { SDK_CLIENT_DEFAULTS } from './sdk';

/** Wallet sessions of the function's tenant role (deployed); none locally, where the access guard stands in. */
export function walletSessions(fn: FunctionName, config: Config): WalletSessions | null {
  if (config.keyBackend === 'local') return null;
  if (!config.tenantRoleArn) throw new Error(`${fn}: TENANT_ROLE_ARN is not set`);
  return new WalletSessions(new STSClient({ ...SDK_CLIENT_DEFAULTS }), config.tenantRoleArn, fn);
}

/** Registry sessions (wallet creation's reservation writes) of the function's registry role; none locally. */
export function registrySessions(fn: FunctionName, config: Config): WalletSessions | null {
  if (config.keyBackend === 'local') return null;
  if (!config.registryRoleArn) throw new Error(`${fn}: REGISTRY_ROLE_ARN is not set`);
  // Rare (one per wallet created) and never reused for long: a few are kept.
  return new WalletSessions(new STSClient({ ...SDK_CLIENT_DEFAULTS }), config.registryRoleArn, `${fn}-registry`, Date.now, 16);
}
