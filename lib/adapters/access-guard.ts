import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SESClient } from '@aws-sdk/client-ses';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { AccessDeniedError, allows, type AccessRequest, type DataAction, type DataKeyAction, type DataKeyPurpose, type IssuerKeyAction, type Principal } from '../service/access';
import type { DataKeyService } from '../didcomm/key-vault';
import { keyAttributesOf, TABLE, type IndexName, type QueueId } from '../service/resources';
import type { KeyManager } from '../keys/port';
import type { SecretDeriver } from '../secrets/port';
import type { UsageKeys } from '../service/usage-keys';
import { inRegistry, sessionWallet } from '../store/session';

/**
 * The local runtime's IAM: every SDK call and key operation a function makes is checked against its
 * declaration (lib/service/access.ts) before it runs, with the principal AWS would see — the
 * function's own role, or its session for one wallet. Deployed, IAM does this from roles the stack
 * builds out of the same declaration.
 */

type Input = Record<string, unknown>;
type Value = string | { S?: string } | undefined;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : (v as { S?: string } | undefined)?.S);

function itemRequest(action: DataAction, keyOrItem: unknown): AccessRequest {
  const partition = str((keyOrItem as Record<string, Value> | undefined)?.[TABLE.partitionKey]) ?? '';
  return { service: 'dynamodb', action, on: 'table', partition };
}

/** The partition value a Query's key condition names (`<pk> = :v`), or '' when it names none. */
function queryPartition(input: Input, on: 'table' | IndexName): string {
  const pkAttr = keyAttributesOf(on === 'table' ? undefined : on).partitionKey;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const term of String(input.KeyConditionExpression ?? '').split(/\s+AND\s+/i)) {
    const m = /^\s*\(?\s*(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)\s*\)?\s*$/.exec(term);
    if (m && (names[m[1]!] ?? m[1]) === pkAttr) return str(values[m[2]!]) ?? '';
  }
  return '';
}

/** The requests IAM would authorize for one DynamoDB API call; null for calls no function declares. */
export function dynamoRequests(command: string, input: Input): AccessRequest[] | null {
  switch (command) {
    case 'GetItemCommand':
      return [itemRequest('GetItem', input.Key)];
    case 'PutItemCommand':
      return [itemRequest('PutItem', input.Item)];
    case 'UpdateItemCommand':
      return [itemRequest('UpdateItem', input.Key)];
    case 'DeleteItemCommand':
      return [itemRequest('DeleteItem', input.Key)];
    case 'BatchGetItemCommand':
      // IAM authorizes a BatchGetItem per key read (dynamodb:LeadingKeys holds every key's partition).
      return Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((t) => (t.Keys ?? []).map((k) => itemRequest('BatchGetItem', k)));
    case 'QueryCommand': {
      const on = (input.IndexName as IndexName | undefined) ?? 'table';
      return [{ service: 'dynamodb', action: 'Query', on, partition: queryPartition(input, on) }];
    }
    case 'TransactWriteItemsCommand':
      return ((input.TransactItems ?? []) as Record<string, Input>[]).map((t) => {
        if (t.Put) return itemRequest('PutItem', t.Put.Item);
        if (t.Update) return itemRequest('UpdateItem', t.Update.Key);
        if (t.Delete) return itemRequest('DeleteItem', t.Delete.Key);
        return itemRequest('ConditionCheckItem', t.ConditionCheck?.Key);
      });
    default:
      return null;
  }
}

/** One decision of the guard: who asked (a function's own role, or its session for one wallet), for what, and the answer. */
export interface GuardDecision {
  readonly principal: Principal;
  readonly request: AccessRequest;
  readonly allowed: boolean;
}

const observers = new Set<(d: GuardDecision) => void>();

/**
 * Calls `observer` with every decision until the returned function is called: what lets a test see
 * in whose session a request's data and key calls were made (IAM's view of the same calls is CloudTrail's).
 */
export function observeGuardDecisions(observer: (d: GuardDecision) => void): () => void {
  observers.add(observer);
  return () => void observers.delete(observer);
}

function decide(principal: Principal, request: AccessRequest): boolean {
  const allowed = allows(principal, request);
  for (const o of observers) o({ principal, request, allowed });
  return allowed;
}

function deny(p: Principal, r: AccessRequest | string): never {
  throw new AccessDeniedError(p, r);
}

/** Where the guard sits in an SDK client's middleware stack: first, before the request is built. */
const GUARD_MIDDLEWARE = { step: 'initialize', name: 'localAccessGuard', priority: 'high' } as const;

export function guardDynamoDb(client: DynamoDBClient, principal: Principal): DynamoDBClient {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const requests = dynamoRequests(context.commandName ?? '', args.input as Input);
      if (requests === null) deny(principal, `dynamodb ${context.commandName}, which no function declares`);
      for (const r of requests) if (!decide(principal, r)) deny(principal, r);
      return next(args);
    },
    GUARD_MIDDLEWARE,
  );
  return client;
}

/** Send calls are checked against the queue they address; other SQS calls are not made by functions. */
export function guardSqs(client: SQSClient, principal: Principal, queueOfUrl: (url: string) => QueueId | undefined): SQSClient {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const queue = queueOfUrl(String((args.input as Input).QueueUrl ?? ''));
      const sending = context.commandName === 'SendMessageCommand' || context.commandName === 'SendMessageBatchCommand';
      if (!sending || !queue || !decide(principal, { service: 'sqs', queue })) deny(principal, { service: 'sqs', queue: queue ?? ('unknown' as QueueId) });
      return next(args);
    },
    GUARD_MIDDLEWARE,
  );
  return client;
}

/** Mail is sent with the function's own role, and only by functions that declare it. */
export function guardSes(client: SESClient, principal: Principal): SESClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      if (!decide(principal, { service: 'ses' })) deny(principal, { service: 'ses' });
      return next(args);
    },
    GUARD_MIDDLEWARE,
  );
  return client;
}

export function guardSecrets(inner: SecretDeriver, principal: Principal): SecretDeriver {
  return {
    async derive(purpose) {
      if (!decide(principal, { service: 'kms-mac' })) deny(principal, { service: 'kms-mac' });
      return inner.derive(purpose);
    },
  };
}

export function guardUsageKeys(inner: UsageKeys, principal: Principal): UsageKeys {
  return {
    async register(walletId) {
      if (!decide(principal, { service: 'usage-keys' })) deny(principal, { service: 'usage-keys' });
      return inner.register(walletId);
    },
  };
}

/**
 * Key operations checked like KMS's IAM conditions: the caller's session must belong to the wallet the
 * operation names (KMS: the key's wallet tag; here the scope passed, while the sealed key itself can only
 * be read from that wallet's partition), and the operation must be declared.
 */
export function guardKeyManager(inner: KeyManager, fn: Principal['fn']): KeyManager {
  const check = (action: IssuerKeyAction, keyWallet: string) => {
    const p = currentPrincipal(fn);
    const r: AccessRequest = { service: 'kms', action, keyWallet };
    if (!decide(p, r)) deny(p, r);
  };
  return {
    create: async (scope, alg) => (check('CreateKey', scope.walletId), inner.create(scope, alg)),
    sign: async (scope, ref, alg, data) => (check('Sign', scope.walletId), inner.sign(scope, ref, alg, data)),
    publicJwk: async (scope, ref, alg) => (check('GetPublicKey', scope.walletId), inner.publicJwk(scope, ref, alg)),
    scheduleDeletion: async (scope, ref) => (check('ScheduleKeyDeletion', scope.walletId), inner.scheduleDeletion(scope, ref)),
  };
}

/** Who is calling: the function's own role, a wallet's session, or a wallet's registry session. */
function currentPrincipal(fn: Principal['fn']): Principal {
  return { fn, wallet: sessionWallet(), ...(inRegistry() ? { registry: true as const } : {}) };
}

/**
 * Data-key operations checked like the tenant role's IAM conditions: the session's wallet must be the
 * encryption context's `wallet_id`, and the operation declared for the context's `purpose`
 * (`tenant.dataKeys`).
 */
export function guardDataKeys(inner: DataKeyService, fn: Principal['fn']): DataKeyService {
  const check = (action: DataKeyAction, contextWallet: string, purpose: DataKeyPurpose) => {
    const p = currentPrincipal(fn);
    const r: AccessRequest = { service: 'kms-data-key', action, contextWallet, purpose };
    if (!decide(p, r)) deny(p, r);
  };
  return {
    generate: async (walletId, purpose) => (check('GenerateDataKey', walletId, purpose), inner.generate(walletId, purpose)),
    decrypt: async (walletId, purpose, sealed) => (check('Decrypt', walletId, purpose), inner.decrypt(walletId, purpose, sealed)),
  };
}
