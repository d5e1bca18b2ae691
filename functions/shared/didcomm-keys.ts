import { KMSClient } from '@aws-sdk/client-kms';
import { guardDataKeys } from '../../lib/adapters/access-guard';
import { KmsDataKeys } from '../../lib/adapters/kms-data-keys';
import { ClientsByWallet } from '../../lib/adapters/wallet-sessions';
import { LocalDataKeys, SealedKeyVault, type DidcommKeyVault } from '../../lib/didcomm/key-vault';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { cachingDeriver } from '../../lib/secrets/port';
import { sessionWallet } from '../../lib/store/session';
import type { Deps } from './deps';

/**
 * The DIDComm key vault. Deployed: data keys from KMS under the stack's DIDComm key (`kmsKeyArn`),
 * with the credentials of the wallet session under way, whose role may use it only with its own
 * wallet's encryption context. Locally: data keys sealed under the local master key, every operation
 * checked by the access guard.
 */
export function buildDidcommKeyVault(deps: Deps, kmsKeyArn: string | undefined): DidcommKeyVault {
  const { config } = deps;
  if (config.keyBackend === 'local') {
    return new SealedKeyVault(deps.store, guardDataKeys(new LocalDataKeys(cachingDeriver(new LocalSecretDeriver(config.localMasterKey))), deps.fn));
  }
  const sessions = deps.sessions;
  if (!sessions) throw new Error(`${deps.fn} has no tenant role for DIDComm keys`);
  if (!kmsKeyArn) throw new Error(`${deps.fn} has no DIDComm KMS key`);
  const base = new KMSClient({});
  const clients = new ClientsByWallet<KMSClient>((wallet) => new KMSClient({ requestHandler: base.config.requestHandler, credentials: sessions.credentials(wallet!) }));
  const dataKeys = new KmsDataKeys(() => {
    const wallet = sessionWallet();
    if (wallet === null) throw new Error('DIDComm data keys are used only inside a wallet session');
    return clients.get(wallet);
  }, kmsKeyArn);
  return new SealedKeyVault(deps.store, dataKeys);
}
