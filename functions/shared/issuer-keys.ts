import { guardKeyManager } from '../../lib/adapters/access-guard';
import { KmsKeyManager } from '../../lib/adapters/kms-key-manager';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import type { KeyManager } from '../../lib/keys/port';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { cachingDeriver } from '../../lib/secrets/port';
import type { Deps } from './deps';
import { sessionKmsClient } from './session-kms';

/**
 * The issuer key manager. Deployed: KMS with the credentials of the wallet session under way, whose
 * role reaches only keys tagged with that wallet (outside a session there are none to use). Locally:
 * sealed software keys in the wallet's partition, every operation checked by the access guard.
 */
export function buildKeyManager(deps: Deps): KeyManager {
  const { config } = deps;
  if (config.keyBackend === 'local') {
    // The local stand-in for KMS seals keys with its own key-encryption key: not the function's MAC use.
    const kek = cachingDeriver(new LocalSecretDeriver(config.localMasterKey));
    return guardKeyManager(new LocalKeyManager(deps.store, kek), deps.fn);
  }
  return new KmsKeyManager(sessionKmsClient(deps, 'issuer keys'), config.issuerKeyTag);
}
