import { createHash } from 'node:crypto';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { SendRawEmailCommand, SESClient } from '@aws-sdk/client-ses';
import { PurgeQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoRequests, guardDataKeys, observeGuardDecisions, guardDynamoDb, guardKeyManager, guardSecrets, guardSes, guardSqs, guardUsageKeys } from '../../lib/adapters/access-guard';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { allows, likeMatches, type Principal } from '../../lib/service/access';
import { keys, tenantScope } from '../../lib/store/keys';
import { inRegistry, inRegistrySession, inSession, sessionWallet, withOwnRole } from '../../lib/store/session';
import { MemoryStore } from '../helpers/memory-store';

/** A DynamoDB client that answers every call it lets through with an empty success, and records it. */
function fakeDynamo(principal: Principal) {
  const client = new DynamoDBClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  const reached: string[] = [];
  client.middlewareStack.add(
    (_next, ctx) => async () => {
      reached.push(ctx.commandName!);
      return { output: { $metadata: {} }, response: {} } as never;
    },
    { step: 'build', priority: 'low' },
  );
  guardDynamoDb(client, principal);
  return { client, doc: DynamoDBDocumentClient.from(client), reached };
}

describe('the DynamoDB calls IAM would authorize', () => {
  test('item calls name their partition, plain or marshalled; a query its index and key condition; a transaction each item', () => {
    expect(dynamoRequests('GetItemCommand', { Key: { PK: 'W#1', SK: 'x' } })).toEqual([{ service: 'dynamodb', action: 'GetItem', on: 'table', partition: 'W#1' }]);
    expect(dynamoRequests('PutItemCommand', { Item: { PK: { S: 'W#2' }, SK: { S: 'x' } } })).toEqual([{ service: 'dynamodb', action: 'PutItem', on: 'table', partition: 'W#2' }]);
    expect(
      dynamoRequests('QueryCommand', {
        IndexName: 'GSI1',
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :sk)',
        ExpressionAttributeNames: { '#pk': 'GSI1PK', '#sk': 'GSI1SK' },
        ExpressionAttributeValues: { ':pk': 'AK#ab', ':sk': 'A' },
      }),
    ).toEqual([{ service: 'dynamodb', action: 'Query', on: 'GSI1', partition: 'AK#ab' }]);
    expect(
      dynamoRequests('TransactWriteItemsCommand', {
        TransactItems: [{ Put: { Item: { PK: 'W#1' } } }, { Update: { Key: { PK: 'W#1' } } }, { Delete: { Key: { PK: 'W#1' } } }, { ConditionCheck: { Key: { PK: 'SYS#X' } } }],
      })!.map((r) => (r.service === 'dynamodb' ? `${r.action} ${r.partition}` : '')),
    ).toEqual(['PutItem W#1', 'UpdateItem W#1', 'DeleteItem W#1', 'ConditionCheckItem SYS#X']);
    expect(
      dynamoRequests('BatchGetItemCommand', { RequestItems: { t: { Keys: [{ PK: 'W#1', SK: 'a' }, { PK: { S: 'W#2' }, SK: { S: 'b' } }] } } })!.map((r) => (r.service === 'dynamodb' ? `${r.action} ${r.partition}` : '')),
    ).toEqual(['BatchGetItem W#1', 'BatchGetItem W#2']);
    // Any spacing around AND; no partition named is '' (which no grant matches).
    expect(dynamoRequests('QueryCommand', { KeyConditionExpression: 'PK = :pk  AND\tbegins_with(SK, :p)', ExpressionAttributeValues: { ':pk': 'W#3', ':p': 'x' } })).toEqual([{ service: 'dynamodb', action: 'Query', on: 'table', partition: 'W#3' }]);
    expect(dynamoRequests('QueryCommand', {})).toEqual([{ service: 'dynamodb', action: 'Query', on: 'table', partition: '' }]);
    expect(dynamoRequests('GetItemCommand', { Key: { SK: 'x' } })).toEqual([{ service: 'dynamodb', action: 'GetItem', on: 'table', partition: '' }]);
    expect(dynamoRequests('DeleteItemCommand', { Key: { PK: 'W#4', SK: 'x' } })).toEqual([{ service: 'dynamodb', action: 'DeleteItem', on: 'table', partition: 'W#4' }]);
    expect(dynamoRequests('BatchGetItemCommand', { RequestItems: { t: {} } })).toEqual([]);
    expect(dynamoRequests('ScanCommand', {})).toBeNull();
    expect(dynamoRequests('BatchWriteItemCommand', {})).toBeNull();
  });
});

describe('the partition a key condition names', () => {
  const partition = (KeyConditionExpression: string) => {
    const [r] = dynamoRequests('QueryCommand', { KeyConditionExpression, ExpressionAttributeNames: { '#pk': 'PK' }, ExpressionAttributeValues: { ':pk': 'W#3', ':p': 'x' } })!;
    return r!.service === 'dynamodb' ? r!.partition : null;
  };

  test('is read whatever the spacing, parentheses or place of the partition key term', () => {
    for (const expr of ['PK=:pk', '#pk=:pk', '( #pk = :pk )', '(PK= :pk) AND begins_with(SK, :p)', 'begins_with(SK, :p) AND PK = :pk', 'SK = :p AND #pk =:pk', '#pk = :pk and SK > :p', ' #pk = :pk '])
      expect([expr, partition(expr)]).toEqual([expr, 'W#3']);
  });

  test("is '' (which no grant matches) when the term is not a plain equality on the partition key", () => {
    for (const expr of ['x.PK = :pk', 'PK = :pk.x', 'PK = :pk )x', 'SK = :pk', 'PK < :pk', 'PK = :pk OR PK = :p', 'begins_with(PK, :pk)', 'PK = :missing'])
      expect([expr, partition(expr)]).toEqual([expr, '']);
  });
});

describe('the local access guard refuses what a function has not declared, before the call leaves', () => {
  test("a wallet session reaches its own partitions only (W#7 and W#7#…, not W#70 or W#8)", async () => {
    const { doc, reached } = fakeDynamo({ fn: 'webhooks', wallet: '7' });
    await doc.send(new GetCommand({ TableName: 't', Key: { PK: 'W#7', SK: 'a' } }));
    await doc.send(new PutCommand({ TableName: 't', Item: { PK: 'W#7#SL#1', SK: 'a' } }));
    for (const pk of ['W#70', 'W#8', 'SYS#COUNTER']) {
      await expect(doc.send(new GetCommand({ TableName: 't', Key: { PK: pk, SK: 'a' } }))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    }
    expect(reached).toEqual(['GetItemCommand', 'PutItemCommand']);
  });

  test('an undeclared action is refused even on the right partition (the stalled-redelivery bug class)', async () => {
    const { doc, reached } = fakeDynamo({ fn: 'taa', wallet: '7' });
    await expect(
      doc.send(new UpdateCommand({ TableName: 't', Key: { PK: 'W#7', SK: 'a' }, UpdateExpression: 'SET #a = :a', ExpressionAttributeNames: { '#a': 'a' }, ExpressionAttributeValues: { ':a': 1 } })),
    ).rejects.toThrow(/taa \(session of wallet 7\) is not authorized to perform dynamodb:UpdateItem/);
    expect(reached).toEqual([]);
  });

  test('one foreign item refuses the whole transaction', async () => {
    const { doc, reached } = fakeDynamo({ fn: 'dids', wallet: '7' });
    await expect(
      doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 't', Item: { PK: 'W#7', SK: 'a' } } }, { Put: { TableName: 't', Item: { PK: 'W#8', SK: 'b' } } }] })),
    ).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(reached).toEqual([]);
  });

  test('a call no function declares (a Scan) is refused, and the refusal names it', async () => {
    const { client, reached } = fakeDynamo({ fn: 'tenancy', wallet: '7' });
    await expect(client.send(new ScanCommand({ TableName: 't' }))).rejects.toThrow('dynamodb ScanCommand, which no function declares');
    expect(reached).toEqual([]);
  });

  test("a function's own role reaches its named partitions and indexes only", async () => {
    const { doc, reached } = fakeDynamo({ fn: 'resolver', wallet: null });
    await doc.send(new QueryCommand({ TableName: 't', IndexName: 'PublicDids', KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'PDID' }, ExpressionAttributeValues: { ':pk': 'DID#x' } }));
    await expect(
      doc.send(new QueryCommand({ TableName: 't', IndexName: 'GSI1', KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'GSI1PK' }, ExpressionAttributeValues: { ':pk': 'AK#x' } })),
    ).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(doc.send(new GetCommand({ TableName: 't', Key: { PK: 'W#1', SK: 'a' } }))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(reached).toEqual(['QueryCommand']);
  });

  test('the store picks the session under way: the same code is allowed in one wallet and refused for another', async () => {
    const clients = new Map<string | null, ReturnType<typeof fakeDynamo>>();
    const store = new DynamoDbStore(() => {
      const w = sessionWallet();
      if (!clients.has(w)) clients.set(w, fakeDynamo({ fn: 'dids', wallet: w }));
      return clients.get(w)!.client;
    }, 't');
    const a = tenantScope('7');
    const b = tenantScope('8');
    await inSession(a, () => store.get(keys.did(a, 'did:key:z6Mk')));
    await expect(inSession(a, () => store.get(keys.did(b, 'did:key:z6Mk')))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(store.get(keys.did(a, 'did:key:z6Mk'))).rejects.toMatchObject({ name: 'AccessDeniedException' }); // no session: dids' own role has no data grant
  });

  test('SQS sends, MAC derivations and usage keys only where declared', async () => {
    const url = 'https://sqs/webhook';
    const send = (fn: Principal['fn']) => {
      const c = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
      c.middlewareStack.add(() => async () => ({ output: { $metadata: {}, Successful: [], Failed: [] }, response: {} }) as never, { step: 'build', priority: 'low' });
      guardSqs(c, { fn, wallet: null }, (u) => (u === url ? 'webhook' : undefined));
      return c.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: '1', MessageBody: 'x' }] }));
    };
    await expect(send('webhook-relay')).resolves.toBeDefined();
    await expect(send('webhooks')).rejects.toMatchObject({ name: 'AccessDeniedException' });
    const secrets = new LocalSecretDeriver('ab'.repeat(32));
    await expect(guardSecrets(secrets, { fn: 'authorizer', wallet: null }).derive('api-key-mac/v1')).resolves.toHaveLength(32);
    // Refused as AWS refuses: a client fault with IAM's 400, saying who and what.
    await expect(guardSecrets(secrets, { fn: 'resolver', wallet: null }).derive('api-key-mac/v1')).rejects.toMatchObject({
      name: 'AccessDeniedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message: 'resolver (own role) is not authorized to perform kms:GenerateMac: not declared in lib/service/access.ts',
    });
    const registered: string[] = [];
    const usage = { register: async (w: string) => void registered.push(w) };
    await guardUsageKeys(usage, { fn: 'tenancy', wallet: null }).register('1');
    await expect(guardUsageKeys(usage, { fn: 'webhooks', wallet: null }).register('2')).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringContaining('webhooks (own role) is not authorized to perform apigateway:POST on usage keys') });
    expect(registered).toEqual(['1']);
  });

  test('SQS: only sends (single or batch) to a declared queue; no other call, and no unknown queue', async () => {
    const url = 'https://sqs/webhook';
    const sqs = (fn: Principal['fn']) => {
      const c = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
      // The answer carries the body's MD5, which the client checks.
      const output = { $metadata: {}, MessageId: 'm', MD5OfMessageBody: createHash('md5').update('x').digest('hex') };
      c.middlewareStack.add(() => async () => ({ output, response: {} }) as never, { step: 'build', priority: 'low' });
      return guardSqs(c, { fn, wallet: null }, (u) => (u === url ? 'webhook' : undefined));
    };
    await expect(sqs('webhook-relay').send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }))).resolves.toBeDefined();
    await expect(sqs('webhook-relay').send(new ReceiveMessageCommand({ QueueUrl: url }))).rejects.toThrow('webhook-relay (own role) is not authorized to perform sqs:SendMessage to webhook');
    await expect(sqs('webhook-relay').send(new PurgeQueueCommand({ QueueUrl: url }))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(sqs('webhook-relay').send(new SendMessageCommand({ QueueUrl: 'https://sqs/other', MessageBody: 'x' }))).rejects.toThrow('sqs:SendMessage to unknown');
  });

  test('an observer sees every decision, allowed or not, until it stops observing', async () => {
    const seen: string[] = [];
    const stop = observeGuardDecisions((d) => seen.push(`${d.principal.fn}/${d.principal.wallet} ${d.request.service === 'dynamodb' ? d.request.partition : d.request.service} ${d.allowed}`));
    const { doc } = fakeDynamo({ fn: 'webhooks', wallet: '7' });
    await doc.send(new GetCommand({ TableName: 't', Key: { PK: 'W#7', SK: 'a' } }));
    await expect(doc.send(new GetCommand({ TableName: 't', Key: { PK: 'W#8', SK: 'a' } }))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    stop();
    await doc.send(new GetCommand({ TableName: 't', Key: { PK: 'W#7', SK: 'b' } }));
    expect(seen).toEqual(['webhooks/7 W#7 true', 'webhooks/7 W#8 false']);
  });

  test('SES: mail only from a function that declares it', async () => {
    const sent: string[] = [];
    const ses = (fn: Principal['fn']) => {
      const c = new SESClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
      c.middlewareStack.add(() => async () => (sent.push(fn), { output: { $metadata: {}, MessageId: 'm' }, response: {} }) as never, { step: 'build', priority: 'low' });
      return guardSes(c, { fn, wallet: null }).send(new SendRawEmailCommand({ RawMessage: { Data: new Uint8Array([1]) } }));
    };
    await expect(ses('email-worker')).resolves.toMatchObject({ MessageId: 'm' });
    await expect(ses('webhook-delivery')).rejects.toThrow('webhook-delivery (own role) is not authorized to perform ses:SendRawEmail');
    expect(sent).toEqual(['email-worker']);
  });

  test("DIDComm data keys: only a declaring function, only in a wallet's session, only that wallet's context, only the declared operations", async () => {
    const reached: string[] = [];
    const inner = {
      generate: async (w: string, p: string) => (reached.push(`generate ${w} ${p}`), { plaintext: new Uint8Array(32), sealed: 'x' }),
      decrypt: async (w: string, p: string) => (reached.push(`decrypt ${w} ${p}`), new Uint8Array(32)),
    };
    // A function that declares none (issuer keys only): refused before the key service, in any session.
    const lists = guardDataKeys(inner as never, 'status-lists');
    await expect(inSession(tenantScope('7'), () => lists.generate('7', 'didcomm'))).rejects.toThrow('status-lists (session of wallet 7) is not authorized to perform kms:GenerateDataKey of the didcomm data key of wallet 7');
    await expect(inSession(tenantScope('7'), () => lists.decrypt('7', 'didcomm', 'x' as never))).rejects.toThrow(/kms:Decrypt of the didcomm data key of wallet 7/);
    // The agent's worker: its own wallet's context only, and never outside a session.
    const worker = guardDataKeys(inner as never, 'didcomm-worker');
    await expect(inSession(tenantScope('7'), () => worker.generate('7', 'didcomm'))).resolves.toMatchObject({ sealed: 'x' });
    await expect(inSession(tenantScope('7'), () => worker.decrypt('7', 'didcomm', 'x' as never))).resolves.toHaveLength(32);
    await expect(inSession(tenantScope('8'), () => worker.decrypt('7', 'didcomm', 'x' as never))).rejects.toThrow(/session of wallet 8.*kms:Decrypt of the didcomm data key of wallet 7/);
    await expect(worker.generate('7', 'didcomm')).rejects.toMatchObject({ name: 'AccessDeniedException' });
    // The outbound worker unseals only: it never makes a data key.
    const outbound = guardDataKeys(inner as never, 'didcomm-outbound');
    await expect(inSession(tenantScope('7'), () => outbound.generate('7', 'didcomm'))).rejects.toThrow(/kms:GenerateDataKey/);
    expect(reached).toEqual(['generate 7 didcomm', 'decrypt 7 didcomm']);
  });

  test('a data-key purpose that is not one of ours is refused, never looked up as an object member', async () => {
    const inner = { generate: async () => ({ plaintext: new Uint8Array(32), sealed: 'x' }), decrypt: async () => new Uint8Array(32) };
    const worker = guardDataKeys(inner as never, 'didcomm-worker');
    // The purpose is a string from the caller; '__proto__' or 'constructor' must not reach the grant table's prototype.
    for (const purpose of ['__proto__', 'constructor', 'toString', 'DIDCOMM'])
      await expect(inSession(tenantScope('7'), () => worker.decrypt('7', purpose as never, 'x' as never))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });

  test('data keys per purpose: a function granted only the DIDComm key is refused the AnonCreds key, for its own wallet too, and the reverse', async () => {
    const reached: string[] = [];
    const inner = {
      generate: async (w: string, p: string) => (reached.push(`generate ${w} ${p}`), { plaintext: new Uint8Array(32), sealed: 'x' }),
      decrypt: async (w: string, p: string) => (reached.push(`decrypt ${w} ${p}`), new Uint8Array(32)),
    };
    const own = <T>(fn: () => Promise<T>) => inSession(tenantScope('7'), fn);
    // DIDComm functions: their own wallet's DIDComm key, never its AnonCreds key.
    for (const fn of ['didcomm', 'didcomm-worker', 'didcomm-outbound', 'dids', 'jsonld'] as const) {
      const g = guardDataKeys(inner as never, fn);
      await expect(own(() => g.decrypt('7', 'didcomm', 'x' as never))).resolves.toHaveLength(32);
      await expect(own(() => g.decrypt('7', 'anoncreds', 'x' as never))).rejects.toThrow(`${fn} (session of wallet 7) is not authorized to perform kms:Decrypt of the anoncreds data key of wallet 7`);
      await expect(own(() => g.generate('7', 'anoncreds'))).rejects.toThrow(/kms:GenerateDataKey of the anoncreds data key/);
    }
    // The AnonCreds workers: the AnonCreds key only (the issuing worker: Decrypt only), never the DIDComm key.
    const defs = guardDataKeys(inner as never, 'anoncreds-worker');
    await expect(own(() => defs.generate('7', 'anoncreds'))).resolves.toMatchObject({ sealed: 'x' });
    await expect(own(() => defs.decrypt('7', 'anoncreds', 'x' as never))).resolves.toHaveLength(32);
    await expect(own(() => defs.decrypt('7', 'didcomm', 'x' as never))).rejects.toThrow(/anoncreds-worker .*kms:Decrypt of the didcomm data key of wallet 7/);
    const issuer = guardDataKeys(inner as never, 'credential-issuer');
    await expect(own(() => issuer.decrypt('7', 'anoncreds', 'x' as never))).resolves.toHaveLength(32);
    await expect(own(() => issuer.generate('7', 'anoncreds'))).rejects.toThrow(/kms:GenerateDataKey of the anoncreds data key/);
    await expect(own(() => issuer.decrypt('7', 'didcomm', 'x' as never))).rejects.toThrow(/kms:Decrypt of the didcomm data key/);
    // The admin group: an offer's invitation (DIDComm) and revocation (AnonCreds, Decrypt only).
    const admin = guardDataKeys(inner as never, 'anoncreds');
    await expect(own(() => admin.generate('7', 'didcomm'))).resolves.toMatchObject({ sealed: 'x' });
    await expect(own(() => admin.decrypt('7', 'anoncreds', 'x' as never))).resolves.toHaveLength(32);
    await expect(own(() => admin.generate('7', 'anoncreds'))).rejects.toThrow(/kms:GenerateDataKey of the anoncreds data key/);
    // Another wallet's AnonCreds key: refused to a function granted it.
    await expect(inSession(tenantScope('8'), () => issuer.decrypt('7', 'anoncreds', 'x' as never))).rejects.toThrow(/session of wallet 8/);
    // A purpose the declaration does not know is no purpose at all.
    await expect(own(() => defs.decrypt('7', 'constructor' as never, 'x' as never))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(reached).toEqual([
      ...['didcomm', 'didcomm-worker', 'didcomm-outbound', 'dids', 'jsonld'].map(() => 'decrypt 7 didcomm'),
      'generate 7 anoncreds',
      'decrypt 7 anoncreds',
      'decrypt 7 anoncreds',
      'generate 7 didcomm',
      'decrypt 7 anoncreds',
    ]);
  });

  test("issuer keys: only in a wallet's session, only that wallet's keys, only the declared operations", async () => {
    const store = new MemoryStore();
    const km = guardKeyManager(new LocalKeyManager(store, new LocalSecretDeriver('ab'.repeat(32))), 'dids');
    const a = tenantScope('7');
    const b = tenantScope('8');
    const keyB = await inSession(b, () => km.create(b, 'EdDSA'));
    await expect(inSession(b, () => km.publicJwk(b, keyB.ref, 'EdDSA'))).resolves.toEqual(keyB.publicJwk);
    await expect(inSession(a, () => km.publicJwk(b, keyB.ref, 'EdDSA'))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(km.create(a, 'EdDSA')).rejects.toMatchObject({ name: 'AccessDeniedException' }); // outside any session
    // dids declares no Sign (nothing it serves signs); a signer function will.
    await expect(inSession(b, () => km.sign(b, keyB.ref, 'EdDSA', new Uint8Array([1])))).rejects.toThrow(/kms:Sign/);
    expect(allows({ fn: 'dids', wallet: '8' }, { service: 'kms', action: 'ScheduleKeyDeletion', keyWallet: '8' })).toBe(true);
  });
});

describe('wallet sessions', () => {
  test('no session outside; a session never switches to another wallet; entering the same wallet again is a no-op', async () => {
    const a = tenantScope('7');
    expect(sessionWallet()).toBeNull();
    await inSession(a, async () => {
      expect(sessionWallet()).toBe('7');
      await inSession(a, async () => expect(sessionWallet()).toBe('7'));
      await expect(inSession(tenantScope('8'), async () => 'borrowed')).rejects.toMatchObject({ name: 'SessionSwitchError' });
    });
    expect(sessionWallet()).toBeNull();
    // Concurrent sessions do not leak into each other.
    const seen = await Promise.all(['1', '2', '3'].map((w) => inSession(tenantScope(w), async () => (await new Promise((r) => setTimeout(r, 5)), sessionWallet()))));
    expect(seen).toEqual(['1', '2', '3']);
  });

  test('a registry session is entered only from outside any session, and nothing is entered from inside it', async () => {
    const a = tenantScope('7');
    await inRegistrySession(a, async () => {
      expect([sessionWallet(), inRegistry()]).toEqual(['7', true]);
      await expect(inSession(a, async () => 'as the wallet')).rejects.toMatchObject({ name: 'RegistrySessionError' });
      await expect(inSession(tenantScope('8'), async () => 'borrowed')).rejects.toMatchObject({ name: 'SessionSwitchError' });
      await expect(inRegistrySession(a, async () => 'again')).rejects.toMatchObject({ name: 'RegistrySessionError' });
      await withOwnRole(async () => expect([sessionWallet(), inRegistry()]).toEqual([null, false]));
    });
    await inSession(a, async () => {
      expect(inRegistry()).toBe(false);
      await expect(inRegistrySession(a, async () => 'escalated')).rejects.toMatchObject({ name: 'RegistrySessionError' });
    });
    expect([sessionWallet(), inRegistry()]).toEqual([null, false]);
  });

  test("reservations: a wallet session of tenancy may not write them, its registry session may, and only its own wallet's record beside them", async () => {
    const put = (principal: Principal, PK: string) => fakeDynamo(principal).doc.send(new PutCommand({ TableName: 't', Item: { PK, SK: 'x', wallet_id: '7' } }));
    for (const PK of ['SYS#WNAME#acme', 'SYS#PUBREF#Aa0_Bb1-Cc2Dd3Ee4Ff5Gg']) {
      await expect(put({ fn: 'tenancy', wallet: '7' }, PK)).rejects.toMatchObject({ name: 'AccessDeniedException' });
      await expect(put({ fn: 'tenancy', wallet: null }, PK)).rejects.toMatchObject({ name: 'AccessDeniedException' });
      await expect(put({ fn: 'tenancy', wallet: '7', registry: true }, PK)).resolves.toBeDefined();
      await expect(put({ fn: 'dids', wallet: '7', registry: true }, PK)).rejects.toMatchObject({ name: 'AccessDeniedException' });
    }
    await expect(put({ fn: 'tenancy', wallet: '7', registry: true }, 'W#7')).resolves.toBeDefined();
    for (const PK of ['W#8', 'W#7#x', 'W#70']) await expect(put({ fn: 'tenancy', wallet: '7', registry: true }, PK)).rejects.toMatchObject({ name: 'AccessDeniedException' });
    const { doc } = fakeDynamo({ fn: 'tenancy', wallet: '7', registry: true });
    await expect(doc.send(new GetCommand({ TableName: 't', Key: { PK: 'SYS#WNAME#acme', SK: 'WNAME' } }))).rejects.toThrow(/\(registry session of wallet 7\) is not authorized/);
    // Issuer keys are never used in a registry session.
    const km = guardKeyManager(new LocalKeyManager(new MemoryStore(), new LocalSecretDeriver('ab'.repeat(32))), 'tenancy');
    await expect(inRegistrySession(tenantScope('7'), () => km.create(tenantScope('7'), 'EdDSA'))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    // A registry session is not the wallet's session: a function whose wallet sessions may use issuer
    // and data keys (dids) may not in a registry session of the same wallet.
    const didsKm = guardKeyManager(new LocalKeyManager(new MemoryStore(), new LocalSecretDeriver('ab'.repeat(32))), 'dids');
    await expect(inSession(tenantScope('7'), () => didsKm.create(tenantScope('7'), 'EdDSA'))).resolves.toBeDefined();
    await expect(inRegistrySession(tenantScope('7'), () => didsKm.create(tenantScope('7'), 'EdDSA'))).rejects.toThrow(/dids \(registry session of wallet 7\) is not authorized/);
    const dataKeys = guardDataKeys({ generate: async () => ({ plaintext: new Uint8Array(32), sealed: new Uint8Array(1) }), decrypt: async () => new Uint8Array(32) } as never, 'dids');
    await expect(inSession(tenantScope('7'), () => dataKeys.generate('7', 'didcomm'))).resolves.toBeDefined();
    await expect(inRegistrySession(tenantScope('7'), () => dataKeys.generate('7', 'didcomm'))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });
});

describe('the access decision (what IAM decides, decided locally)', () => {
  const table = (fn: Principal['fn'], wallet: string | null, action: string, partition: string) =>
    allows({ fn, wallet }, { service: 'dynamodb', action: action as never, on: 'table', partition });

  test("a function's own table grant reaches the partitions it names, and no other", () => {
    expect(table('bootstrap', null, 'PutItem', 'SYS#ADMIN')).toBe(true);
    expect(table('bootstrap', null, 'PutItem', 'SYS#ADMIN2')).toBe(false);
    expect(table('bootstrap', null, 'PutItem', 'W#1')).toBe(false);
    expect(table('bootstrap', null, 'GetItem', 'SYS#ADMIN')).toBe(false);
  });

  test("reservations are the registry session's alone: a wallet session has no write there; the registry session reaches them and its own record only", () => {
    expect(table('tenancy', '7', 'PutItem', 'SYS#WNAME#acme')).toBe(false);
    expect(table('tenancy', '7', 'PutItem', 'SYS#PUBREF#abc')).toBe(false);
    expect(table('tenancy', '7', 'PutItem', 'W#7')).toBe(true);
    const registry = (action: string, partition: string) =>
      allows({ fn: 'tenancy', wallet: '7', registry: true }, { service: 'dynamodb', action: action as never, on: 'table', partition });
    expect(registry('PutItem', 'SYS#WNAME#acme')).toBe(true);
    expect(registry('PutItem', 'SYS#PUBREF#abc')).toBe(true);
    expect(registry('PutItem', 'W#7')).toBe(true);
    expect(registry('PutItem', 'SYS#ADMIN')).toBe(false);
    expect(registry('PutItem', 'W#8')).toBe(false);
    expect(registry('PutItem', 'W#7#DID#x')).toBe(false);
    expect(registry('DeleteItem', 'SYS#WNAME#acme')).toBe(false);
    // Its record grant is the table's partition W#7, not the same value in an index.
    expect(allows({ fn: 'tenancy', wallet: '7', registry: true }, { service: 'dynamodb', action: 'PutItem', on: 'GSI1', partition: 'W#7' })).toBe(false);
    // And only PutItem there: the record is never updated or removed by the registry session.
    expect(registry('UpdateItem', 'W#7')).toBe(false);
    expect(registry('DeleteItem', 'W#7')).toBe(false);
  });

  test("a session's own partitions are table partitions: the same value on an index is not its own", () => {
    expect(allows({ fn: 'oid4vci', wallet: '7' }, { service: 'dynamodb', action: 'Query', on: 'table', partition: 'W#7' })).toBe(true);
    expect(allows({ fn: 'oid4vci', wallet: '7' }, { service: 'dynamodb', action: 'Query', on: 'GSI1', partition: 'W#7' })).toBe(false);
    expect(allows({ fn: 'oid4vci', wallet: '7' }, { service: 'sqs', queue: 'email' })).toBe(false);
  });

  test('mail only where declared, with the own role; a function without session grants has nothing in a session', () => {
    expect(allows({ fn: 'email-worker', wallet: null }, { service: 'ses' })).toBe(true);
    expect(allows({ fn: 'oid4vci', wallet: null }, { service: 'ses' })).toBe(false);
    expect(allows({ fn: 'email-worker', wallet: '7' }, { service: 'ses' })).toBe(false);
    expect(allows({ fn: 'meta', wallet: '7' }, { service: 'dynamodb', action: 'GetItem', on: 'table', partition: 'W#7' })).toBe(false);
    expect(allows({ fn: 'meta', wallet: '7' }, { service: 'kms', action: 'Sign', keyWallet: '7' })).toBe(false);
  });

  test('StringLike: * is any run of characters (line breaks too); everything else is literal', () => {
    expect(likeMatches('W#7.x', 'W#7.x')).toBe(true);
    expect(likeMatches('W#7.x', 'W#7Zx')).toBe(false);
    expect(likeMatches('W#(7)+$', 'W#(7)+$')).toBe(true);
    expect(likeMatches('W#7#*', 'W#7#a\nb')).toBe(true);
    expect(likeMatches('W#7#*', 'W#7')).toBe(false);
  });
});
