import { KMSClient } from '@aws-sdk/client-kms';
import { guardSecrets } from '../../lib/adapters/access-guard';
import { KmsSecretDeriver } from '../../lib/adapters/kms-secret-deriver';
import type { Config } from '../../lib/config';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { cachingDeriver, type SecretDeriver } from '../../lib/secrets/port';
import type { FunctionName } from '../../lib/service/access';
import { SDK_CLIENT_DEFAULTS } from './sdk';

/** Secrets derived with the service's HMAC key: KMS GenerateMac deployed, the local master key locally. */
export function macSecrets(fn: FunctionName, config: Config): SecretDeriver {
  return cachingDeriver(
    config.keyBackend === 'kms'
      ? new KmsSecretDeriver(new KMSClient({ ...SDK_CLIENT_DEFAULTS }), config.macKmsKeyId)
      : guardSecrets(new LocalSecretDeriver(config.localMasterKey), { fn, wallet: null }),
  );
}
