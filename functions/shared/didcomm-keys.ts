import { guardDataKeys } from '../../lib/adapters/access-guard';
import { KmsDataKeys } from '../../lib/adapters/kms-data-keys';
import { LocalDataKeys, SealedKeyVault, WalletDataKeys, type DidcommKeyVault } from '../../lib/didcomm/key-vault';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import type { DataKeyPurpose } from '../../lib/service/access';
import { cachingDeriver } from '../../lib/secrets/port';
import type { Deps } from './deps';
import { sessionKmsClient } from './session-kms';

/**
 * The DIDComm key vault, on the wallets' didcomm data keys. Deployed: data keys from KMS under the
 * stack's DIDComm key (`DIDCOMM_KMS_KEY_ID`), with the credentials of the wallet session under way,
 * whose role may use it only with its own wallet's encryption context and a declared purpose.
 * Locally: data keys sealed under the local master key, every operation checked by the access guard.
 */
export function buildDidcommKeyVault(deps: Deps): DidcommKeyVault {
  return new SealedKeyVault(deps.store, buildWalletDataKeys(deps, 'didcomm'));
}

/** The wallets' data keys of one purpose (get or create, cached per warm instance): didcomm for the key vault, anoncreds for the AnonCreds key sealer. */
export function buildWalletDataKeys(deps: Deps, purpose: DataKeyPurpose): WalletDataKeys {
  const { config } = deps;
  if (config.keyBackend === 'local') {
    return new WalletDataKeys(deps.store, guardDataKeys(new LocalDataKeys(cachingDeriver(new LocalSecretDeriver(config.localMasterKey))), deps.fn), purpose);
  }
  if (!config.didcommKmsKeyId) throw new Error(`${deps.fn} has no DIDComm KMS key`);
  return new WalletDataKeys(deps.store, new KmsDataKeys(sessionKmsClient(deps, 'data keys'), config.didcommKmsKeyId), purpose);
}
