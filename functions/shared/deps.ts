import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { STSClient } from '@aws-sdk/client-sts';
import { guardDynamoDb, guardSecrets } from '../../lib/adapters/access-guard';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { KmsSecretDeriver } from '../../lib/adapters/kms-secret-deriver';
import { ClientsByWallet, WalletSessions } from '../../lib/adapters/wallet-sessions';
import { loadConfig, type Config } from '../../lib/config';
import { OutboxPublisher, type EventPublisher } from '../../lib/events/publisher';
import { createLogger } from '../../lib/logging/logger';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { cachingDeriver, type SecretDeriver } from '../../lib/secrets/port';
import { FUNCTION_ACCESS, type FunctionName } from '../../lib/service/access';
import { sessionWallet } from '../../lib/store/session';
import type { ItemStore } from '../../lib/store/port';

/**
 * What every function builds once per cold start: its store, secrets and event publisher, with the
 * credentials its declaration (lib/service/access.ts) gives it. Deployed, a wallet's session is the
 * function's tenant role assumed with the wallet's tag; in the local runtime (`KEY_BACKEND=local`)
 * every call instead passes the access guard, which refuses what the declaration does not allow.
 */
export interface Deps {
  readonly fn: FunctionName;
  readonly config: Config;
  readonly store: ItemStore;
  readonly secrets: SecretDeriver;
  readonly events: EventPublisher;
  /** Credentials of a wallet's session, for further SDK clients (issuer keys); null in the local runtime. */
  readonly sessions: WalletSessions | null;
}

/** The tenant role's sessions, when the function has one and runs in AWS. */
function walletSessions(fn: FunctionName, config: Config): WalletSessions | null {
  if (config.keyBackend === 'local' || !FUNCTION_ACCESS[fn].tenant) return null;
  if (!config.tenantRoleArn) throw new Error(`${fn}: TENANT_ROLE_ARN is not set`);
  return new WalletSessions(new STSClient({}), config.tenantRoleArn, fn);
}

export function buildDeps(fn: FunctionName, config: Config = loadConfig()): Deps {
  const local = config.keyBackend === 'local';
  const sessions = walletSessions(fn, config);
  const base = new DynamoDBClient({});
  const dynamo = new ClientsByWallet<DynamoDBClient>((wallet) => {
    let client = base;
    if (wallet !== null) {
      if (!local && !sessions) throw new Error(`${fn} has no tenant role: it cannot act in wallet ${wallet}'s session`);
      client = new DynamoDBClient({ requestHandler: base.config.requestHandler, ...(sessions ? { credentials: sessions.credentials(wallet) } : {}) });
    }
    return local ? guardDynamoDb(client, { fn, wallet }) : client;
  });
  const store = new DynamoDbStore(() => dynamo.get(sessionWallet()), config.tableName);
  const secrets = cachingDeriver(
    config.keyBackend === 'kms'
      ? new KmsSecretDeriver(new KMSClient({}), config.macKmsKeyId)
      : guardSecrets(new LocalSecretDeriver(config.localMasterKey), { fn, wallet: null }),
  );
  return { fn, config, store, secrets, events: new OutboxPublisher(store), sessions };
}

export { createLogger };
