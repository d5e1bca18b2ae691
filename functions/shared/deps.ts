import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { KmsSecretDeriver } from '../../lib/adapters/kms-secret-deriver';
import { loadConfig, type Config } from '../../lib/config';
import { createLogger } from '../../lib/logging/logger';
import { KmsKeyManager } from '../../lib/adapters/kms-key-manager';
import { NodeWebhookTransport } from '../../lib/adapters/node-webhook-transport';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import type { KeyManager } from '../../lib/keys/port';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue';
import { OutboxPublisher, type EventPublisher } from '../../lib/events/publisher';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { WebhookDispatcher } from '../../lib/webhooks/dispatcher';
import type { Resolver } from '../../lib/webhooks/transport';
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
  readonly events: EventPublisher;
}

export function buildDeps(config: Config = loadConfig()): Deps {
  const store = new DynamoDbStore(new DynamoDBClient({}), config.tableName);
  const secrets = cachingDeriver(
    config.keyBackend === 'kms' ? new KmsSecretDeriver(new KMSClient({}), config.macKmsKeyId) : new LocalSecretDeriver(config.localMasterKey),
  );
  return { config, store, secrets, events: new OutboxPublisher(store) };
}

/** The issuer key manager: KMS keys when deployed, sealed software keys locally. */
export function buildKeyManager(deps: Deps): KeyManager {
  const { config } = deps;
  return config.keyBackend === 'kms' ? new KmsKeyManager(new KMSClient({}), config.issuerKeyTag) : new LocalKeyManager(deps.store, deps.secrets);
}

/** Test seams of the webhook functions; only the local runtime's callers pass them. */
export interface WebhookOverrides {
  /** Answers DNS for the SSRF guard (tests inject chosen addresses). */
  readonly resolver?: Resolver;
}

/** The relay/worker engine: the webhook queue, the SSRF-guarded transport and the retry schedule. */
export function buildDispatcher(deps: Deps, logger: Logger, overrides: WebhookOverrides = {}): WebhookDispatcher {
  const { config } = deps;
  if (!config.webhookQueueUrl) throw new Error('WEBHOOK_QUEUE_URL is not set');
  return new WebhookDispatcher({
    store: deps.store,
    secrets: deps.secrets,
    queue: new SqsJobQueue(new SQSClient({}), config.webhookQueueUrl),
    transport: new NodeWebhookTransport({
      allowLoopback: config.webhookAllowLoopback,
      ...(overrides.resolver ? { resolver: overrides.resolver } : {}),
      userAgent: `${config.serviceName}-webhooks/1`,
    }),
    retryDelaysSeconds: config.webhookRetryDelaysSeconds,
    timeoutMs: config.webhookTimeoutMs,
    log: (message, extra) => logger.info(message, extra),
  });
}

export { createLogger };
