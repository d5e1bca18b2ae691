import { guardDataKeys } from '../../lib/adapters/access-guard';
import { KmsDataKeys } from '../../lib/adapters/kms-data-keys';
import { LocalDataKeys, SealedKeyVault, WalletDataKeys, type DidcommKeyVault } from '../../lib/didcomm/key-vault';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { cachingDeriver } from '../../lib/secrets/port';
import type { Deps } from './deps';
import { sessionKmsClient } from './session-kms';

/**
 * The DIDComm key vault. Deployed: data keys from KMS under the stack's DIDComm key
 * (`DIDCOMM_KMS_KEY_ID`), with the credentials of the wallet session under way, whose role may use it
 * only with its own wallet's encryption context. Locally: data keys sealed under the local master key,
 * every operation checked by the access guard.
 */
export function buildDidcommKeyVault(deps: Deps): DidcommKeyVault {
  return new SealedKeyVault(deps.store, buildWalletDataKeys(deps));
}

/** The wallets' data keys (get or create, cached per warm instance): what the key vault and the AnonCreds key sealer seal under. */
export function buildWalletDataKeys(deps: Deps): WalletDataKeys {
  const { config } = deps;
  if (config.keyBackend === 'local') {
    return new WalletDataKeys(deps.store, guardDataKeys(new LocalDataKeys(cachingDeriver(new LocalSecretDeriver(config.localMasterKey))), deps.fn));
  }
  if (!config.didcommKmsKeyId) throw new Error(`${deps.fn} has no DIDComm KMS key`);
  return new WalletDataKeys(deps.store, new KmsDataKeys(sessionKmsClient(deps, 'DIDComm data keys'), config.didcommKmsKeyId));
}
