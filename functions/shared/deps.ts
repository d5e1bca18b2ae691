import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { guardDynamoDb } from '../../lib/adapters/access-guard';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { ClientsByWallet, type WalletSessions } from '../../lib/adapters/wallet-sessions';
import { loadConfig, type Config } from '../../lib/config';
import { OutboxPublisher, type EventPublisher } from '../../lib/events/publisher';
import { createLogger } from '../../lib/logging/logger';
import type { SecretDeriver } from '../../lib/secrets/port';
import { FUNCTION_ACCESS, type FunctionName } from '../../lib/service/access';
import { inRegistry, sessionWallet } from '../../lib/store/session';
import type { ItemStore } from '../../lib/store/port';
import { SDK_CLIENT_DEFAULTS } from './sdk';

/**
 * What every function builds once per cold start: its store and event publisher, plus — only where its
 * declaration (lib/service/access.ts) says it needs them — MAC-derived secrets and wallet sessions,
 * passed in by the handler so that a function bundles only the clients it uses. Deployed, a wallet's
 * session is the function's tenant role assumed with the wallet's tag; in the local runtime
 * (`KEY_BACKEND=local`) every call instead passes the access guard, which refuses what the declaration
 * does not allow.
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

export interface Wiring {
  /** functions/shared/secrets.ts: for functions that declare `mac`. */
  readonly secrets?: (fn: FunctionName, config: Config) => SecretDeriver;
  /** functions/shared/sessions.ts: for functions that declare `tenant` grants. */
  readonly sessions?: (fn: FunctionName, config: Config) => WalletSessions | null;
  /** functions/shared/sessions.ts `registrySessions`: for functions that declare `registry` grants. */
  readonly registry?: (fn: FunctionName, config: Config) => WalletSessions | null;
}

const undeclaredSecrets: SecretDeriver = {
  derive: async () => {
    throw new Error('this function declares no MAC use (lib/service/access.ts)');
  },
};

export function buildDeps(fn: FunctionName, wiring: Wiring = {}, config: Config = loadConfig()): Deps {
  const access = FUNCTION_ACCESS[fn];
  // The wiring follows the declaration: a mismatch is a start-up error, not a late surprise.
  if (Boolean(access.shared?.mac) !== Boolean(wiring.secrets)) throw new Error(`${fn}: secrets wiring does not match its declared MAC use`);
  if (Boolean(access.tenant) !== Boolean(wiring.sessions)) throw new Error(`${fn}: sessions wiring does not match its declared tenant grants`);
  if (Boolean(access.registry) !== Boolean(wiring.registry)) throw new Error(`${fn}: registry wiring does not match its declared registry grants`);
  const local = config.keyBackend === 'local';
  const sessions = wiring.sessions?.(fn, config) ?? null;
  const base = new DynamoDBClient({ ...SDK_CLIENT_DEFAULTS });
  const dynamo = new ClientsByWallet<DynamoDBClient>((wallet) => {
    let client = base;
    if (wallet !== null) {
      if (!local && !sessions) throw new Error(`${fn} has no tenant role: it cannot act in wallet ${wallet}'s session`);
      client = new DynamoDBClient({ ...SDK_CLIENT_DEFAULTS, requestHandler: base.config.requestHandler, ...(sessions ? { credentials: sessions.credentials(wallet) } : {}) });
    }
    return local ? guardDynamoDb(client, { fn, wallet }) : client;
  });
  // Registry sessions (wallet creation) have clients of their own: never the wallet session's credentials.
  const registrySessions = wiring.registry?.(fn, config) ?? null;
  const registry = new ClientsByWallet<DynamoDBClient>((wallet) => {
    if (wallet === null || !access.registry) throw new Error(`${fn} has no registry role`);
    if (!local && !registrySessions) throw new Error(`${fn}: no registry sessions wired`);
    const client = new DynamoDBClient({ ...SDK_CLIENT_DEFAULTS, requestHandler: base.config.requestHandler, ...(registrySessions ? { credentials: registrySessions.credentials(wallet) } : {}) });
    return local ? guardDynamoDb(client, { fn, wallet, registry: true }) : client;
  }, 16);
  const store = new DynamoDbStore(() => (inRegistry() ? registry.get(sessionWallet()) : dynamo.get(sessionWallet())), config.tableName);
  const secrets = wiring.secrets?.(fn, config) ?? undeclaredSecrets;
  return { fn, config, store, secrets, events: new OutboxPublisher(store), sessions };
}

export { createLogger };
