import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
  TransactionConflictException,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { keyAttributesOf, TABLE } from '../service/resources';
import {
  ConditionFailedError,
  WriteConflictError,
  type Condition,
  type Item,
  type ItemKey,
  type ItemStore,
  type Page,
  type QueryOptions,
  type WriteOp,
} from '../store/port';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

const PK = TABLE.partitionKey;

interface Expressions {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

function conditionParts(condition: Condition | undefined, names: Record<string, string>, values: Record<string, unknown>): string | undefined {
  if (condition === undefined) return undefined;
  if (condition === 'exists') return `attribute_exists(${PK})`;
  if (condition === 'not_exists') return `attribute_not_exists(${PK})`;
  if ('missing' in condition) {
    const terms = condition.missing.map((attr, i) => {
      names[`#m${i}`] = attr;
      return `attribute_not_exists(#m${i})`;
    });
    return [`attribute_exists(${PK})`, ...terms].join(' AND ');
  }
  if ('below' in condition || 'atLeast' in condition) {
    const below = 'below' in condition;
    return Object.entries(below ? condition.below : condition.atLeast)
      .map(([attr, bound], i) => {
        names[`#b${i}`] = attr;
        values[`:b${i}`] = bound;
        return below ? `(attribute_not_exists(#b${i}) OR #b${i} < :b${i})` : `#b${i} >= :b${i}`;
      })
      .join(' AND ');
  }
  const terms = Object.entries(condition.equals).map(([attr, value], i) => {
    names[`#c${i}`] = attr;
    values[`:c${i}`] = value;
    return `#c${i} = :c${i}`;
  });
  return [`attribute_exists(${PK})`, ...terms].join(' AND ');
}

/** The condition (and, for updates, the update) expressions of one operation, names and values merged. */
function expressions(op: WriteOp): Expressions & { UpdateExpression?: string } {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const update = op.type === 'update' ? updateParts(op, names, values) : undefined;
  const ConditionExpression = conditionParts(op.condition, names, values);
  return {
    ...(update !== undefined ? { UpdateExpression: update } : {}),
    ...(ConditionExpression ? { ConditionExpression } : {}),
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}

function updateParts(op: Extract<WriteOp, { type: 'update' }>, names: Record<string, string>, values: Record<string, unknown>): string {
  const sets = Object.entries(op.set).map(([attr, value], i) => {
    names[`#s${i}`] = attr;
    values[`:s${i}`] = value;
    return `#s${i} = :s${i}`;
  });
  const removes = (op.remove ?? []).map((attr, i) => {
    names[`#r${i}`] = attr;
    return `#r${i}`;
  });
  const adds = Object.entries(op.add ?? {}).map(([attr, value], i) => {
    names[`#a${i}`] = attr;
    values[`:a${i}`] = value;
    return `#a${i} :a${i}`;
  });
  return [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '', adds.length ? `ADD ${adds.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
}

/** A single-item write's failure in the port's terms: its condition failed, or a transaction on the item won. */
function singleWriteError(err: unknown): unknown {
  if (err instanceof ConditionalCheckFailedException) return new ConditionFailedError([0]);
  if (err instanceof TransactionConflictException) return new WriteConflictError();
  return err;
}

/**
 * {@link ItemStore} on one DynamoDB table. Takes its client (tests pass a mocked or local one), or a
 * getter that returns the client of the session under way: a wallet's scoped credentials inside its
 * session, the function's own role outside one (lib/store/session.ts).
 */
export class DynamoDbStore implements ItemStore {
  private readonly client: () => DynamoDBClient;
  private readonly docs = new WeakMap<DynamoDBClient, DynamoDBDocumentClient>();

  constructor(
    client: DynamoDBClient | (() => DynamoDBClient),
    private readonly tableName: string,
  ) {
    this.client = typeof client === 'function' ? client : () => client;
  }

  private get doc(): DynamoDBDocumentClient {
    const client = this.client();
    let doc = this.docs.get(client);
    if (!doc) {
      doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
      this.docs.set(client, doc);
    }
    return doc;
  }

  async get(key: ItemKey, opts?: { consistent?: boolean }): Promise<Item | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { PK: key.PK, SK: key.SK }, ConsistentRead: opts?.consistent ?? true }),
    );
    return out.Item as Item | undefined;
  }

  async getMany(keys: readonly ItemKey[], opts?: { consistent?: boolean }): Promise<(Item | undefined)[]> {
    if (keys.length === 0) return [];
    if (keys.length > 100) throw new Error('getMany takes at most 100 keys');
    const found = new Map<string, Item>();
    const id = (k: { PK?: unknown; SK?: unknown }) => `${String(k.PK)}\u0000${String(k.SK)}`;
    let pending: Record<string, unknown>[] = [...new Map(keys.map((k) => [id(k), { PK: k.PK, SK: k.SK }])).values()];
    // DynamoDB may leave keys unprocessed under load: ask again for those, backing off a little.
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error('BatchGetItem left keys unprocessed after retries');
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(200, 10 * 2 ** attempt)));
      const out = await this.doc.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: opts?.consistent ?? true } } }));
      for (const item of (out.Responses?.[this.tableName] ?? []) as Item[]) found.set(id(item), item);
      pending = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
    return keys.map((k) => found.get(id(k)));
  }

  async query(pk: string, opts: QueryOptions = {}): Promise<Item[]> {
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const remaining = opts.limit === undefined ? undefined : opts.limit - items.length;
      const page = await this.queryOnce(pk, opts, remaining, start);
      items.push(...page.items);
      start = page.next as Record<string, unknown> | undefined;
    } while (start && (opts.limit === undefined || items.length < opts.limit));
    return items;
  }

  async queryPage(pk: string, opts: QueryOptions & { limit: number; after?: Readonly<Record<string, unknown>> }): Promise<Page> {
    return this.queryOnce(pk, opts, opts.limit, opts.after as Record<string, unknown> | undefined);
  }

  private async queryOnce(pk: string, opts: QueryOptions, limit: number | undefined, start: Record<string, unknown> | undefined): Promise<Page> {
    const { partitionKey: pkAttr, sortKey: skAttr } = keyAttributesOf(opts.index);
    // An index without a sort key cannot narrow by prefix: refuse rather than answer the whole partition.
    if (opts.skBeginsWith && !skAttr) throw new Error(`index ${opts.index} has no sort key to match a prefix on`);
    if (opts.skBetween && (!skAttr || opts.skBeginsWith)) throw new Error('skBetween needs a sort key and excludes skBeginsWith');
    const between = opts.skBetween && skAttr ? opts.skBetween : undefined;
    const out = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: opts.index,
        KeyConditionExpression: between ? '#pk = :pk AND #sk BETWEEN :lo AND :hi' : opts.skBeginsWith && skAttr ? '#pk = :pk AND begins_with(#sk, :sk)' : '#pk = :pk',
        ExpressionAttributeNames: (opts.skBeginsWith || between) && skAttr ? { '#pk': pkAttr, '#sk': skAttr } : { '#pk': pkAttr },
        ExpressionAttributeValues: between ? { ':pk': pk, ':lo': between[0], ':hi': between[1] } : opts.skBeginsWith && skAttr ? { ':pk': pk, ':sk': opts.skBeginsWith } : { ':pk': pk },
        ExclusiveStartKey: start,
        Limit: limit,
        ScanIndexForward: !opts.descending,
        // GSIs only support eventually consistent reads.
        ConsistentRead: opts.index ? false : (opts.consistent ?? true),
      }),
    );
    return { items: (out.Items ?? []) as Item[], ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}) };
  }

  async write(ops: readonly WriteOp[]): Promise<void> {
    if (ops.length === 0) return;
    if (ops.length === 1 && ops[0]!.type !== 'check') {
      try {
        await this.single(ops[0]!);
      } catch (err) {
        throw singleWriteError(err);
      }
      return;
    }
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: ops.map((op) => this.transactItem(op)) }));
    } catch (err) {
      if (err instanceof TransactionCanceledException) {
        const failed = (err.CancellationReasons ?? [])
          .map((r, i) => (r.Code === 'ConditionalCheckFailed' ? i : -1))
          .filter((i) => i >= 0);
        if (failed.length > 0) throw new ConditionFailedError(failed);
        if ((err.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict')) throw new WriteConflictError();
      }
      throw err;
    }
  }

  async increment(key: ItemKey, attribute: string, condition?: Condition, by = 1): Promise<number> {
    let out;
    try {
      out = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { PK: key.PK, SK: key.SK },
          ...expressions({ type: 'update', key, set: {}, add: { [attribute]: by }, ...(condition ? { condition } : {}) }),
          ReturnValues: 'UPDATED_NEW',
        }),
      );
    } catch (err) {
      throw singleWriteError(err);
    }
    const value = out.Attributes?.[attribute];
    if (typeof value !== 'number') throw new Error('counter update returned no number');
    return value;
  }

  private async single(op: WriteOp): Promise<void> {
    const TableName = this.tableName;
    switch (op.type) {
      case 'put':
        await this.doc.send(new PutCommand({ TableName, Item: op.item, ...expressions(op) }));
        return;
      case 'delete':
        await this.doc.send(new DeleteCommand({ TableName, Key: { PK: op.key.PK, SK: op.key.SK }, ...expressions(op) }));
        return;
      case 'update':
        await this.doc.send(new UpdateCommand({ TableName, Key: { PK: op.key.PK, SK: op.key.SK }, ...expressions(op) } as never));
        return;
      case 'check':
        throw new Error('a condition check is only meaningful inside a transaction');
    }
  }

  private transactItem(op: WriteOp): TransactItem {
    const TableName = this.tableName;
    switch (op.type) {
      case 'put':
        return { Put: { TableName, Item: op.item, ...expressions(op) } };
      case 'delete':
        return { Delete: { TableName, Key: { PK: op.key.PK, SK: op.key.SK }, ...expressions(op) } };
      case 'update':
        return { Update: { TableName, Key: { PK: op.key.PK, SK: op.key.SK }, ...expressions(op) } as never };
      case 'check':
        return { ConditionCheck: { TableName, Key: { PK: op.key.PK, SK: op.key.SK }, ...expressions(op) } as never };
    }
  }
}
