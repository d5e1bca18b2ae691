import { LocalDataKeys, SealedKeyVault, type DidcommKeyVault } from '../../lib/didcomm/key-vault';
import { AppError } from '../../lib/http/errors';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import type { Deps } from './deps';

/**
 * The DIDComm key vault of a function. Deployed, data keys come from the stack's DIDComm KMS key,
 * which the stack does not create yet: until it does, key operations answer 503 (nothing else of the
 * function needs them), and no function declares `dataKeys` (the IAM agreement test would find no
 * grant for them). Locally, data keys are sealed under the local master key; the sealed keys' items
 * pass the access guard as always, the data-key operations are guarded once the declaration has them.
 */
export function didcommKeyVault(deps: Deps): DidcommKeyVault {
  if (deps.config.keyBackend === 'local') return new SealedKeyVault(deps.store, new LocalDataKeys(new LocalSecretDeriver(deps.config.localMasterKey)));
  const unavailable = async (): Promise<never> => {
    throw new AppError(503, 'didcomm_keys_unavailable', 'DIDComm keys are not configured in this deployment (no DIDComm KMS key yet)');
  };
  return { createKey: unavailable, keyPair: unavailable };
}
