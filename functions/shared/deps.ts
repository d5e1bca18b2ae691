import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { KmsSecretDeriver } from '../../lib/adapters/kms-secret-deriver';
import { loadConfig, type Config } from '../../lib/config';
import { createLogger } from '../../lib/logging/logger';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { cachingDeriver, type SecretDeriver } from '../../lib/secrets/port';
import type { ItemStore } from '../../lib/store/port';

/**
 * Adapters every function shares, built once per cold start. The SDK clients are the real ones; in
 * the local runtime AWS_ENDPOINT_URL_* points them at the emulators.
 */
export interface Deps {
  readonly config: Config;
  readonly store: ItemStore;
  readonly secrets: SecretDeriver;
}

export function buildDeps(config: Config = loadConfig()): Deps {
  const store = new DynamoDbStore(new DynamoDBClient({}), config.tableName);
  const secrets = cachingDeriver(
    config.keyBackend === 'kms' ? new KmsSecretDeriver(new KMSClient({}), config.macKmsKeyId) : new LocalSecretDeriver(config.localMasterKey),
  );
  return { config, store, secrets };
}

export { createLogger };
