import { KMSClient } from '@aws-sdk/client-kms';
import { ClientsByWallet } from '../../lib/adapters/wallet-sessions';
import { inRegistry, sessionWallet } from '../../lib/store/session';
import type { Deps } from './deps';
import { SDK_CLIENT_DEFAULTS } from './sdk';

/**
 * Deployed KMS clients with the credentials of the wallet session under way (the tenant role, tagged
 * with the wallet): outside a wallet session, or in a registry session, there is none to use.
 */
export function sessionKmsClient(deps: Deps, what: string): () => KMSClient {
  const sessions = deps.sessions;
  if (!sessions) throw new Error(`${deps.fn} has no tenant role for ${what}`);
  const base = new KMSClient({ ...SDK_CLIENT_DEFAULTS });
  const clients = new ClientsByWallet<KMSClient>((wallet) => new KMSClient({ ...SDK_CLIENT_DEFAULTS, requestHandler: base.config.requestHandler, credentials: sessions.credentials(wallet!) }));
  return () => {
    const wallet = sessionWallet();
    if (wallet === null || inRegistry()) throw new Error(`${what} are used only inside a wallet session`);
    return clients.get(wallet);
  };
}
