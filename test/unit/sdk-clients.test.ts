import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GetItemCommand, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { cannedDynamoDbClient } from '../helpers/canned-dynamodb';
import { SDK_CLIENT_DEFAULTS } from '../../functions/shared/sdk';

/** A client answering every request from memory, counting how often the log filters walk a request or response. */
function countingClient(opts: Record<string, unknown>, body: string, statusCode = 200) {
  const walks = { input: 0, output: 0 };
  const client = cannedDynamoDbClient(opts, body, statusCode);
  client.middlewareStack.add(
    (next, context: Record<string, any>) => async (args) => {
      const [inFilter, outFilter] = [context.inputFilterSensitiveLog, context.outputFilterSensitiveLog];
      context.inputFilterSensitiveLog = (x: unknown) => (walks.input++, inFilter(x));
      context.outputFilterSensitiveLog = (x: unknown) => (walks.output++, outFilter(x));
      return next(args);
    },
    { step: 'initialize', priority: 'high', name: 'countLogFilters' },
  );
  return { client, walks };
}

const get = new GetItemCommand({ TableName: 't', Key: { PK: { S: 'W#1' }, SK: { S: 'WALLET' } } });

describe('the AWS SDK clients', () => {
  it('do not walk requests and responses for a log line nobody writes', async () => {
    const ours = countingClient({ ...SDK_CLIENT_DEFAULTS }, JSON.stringify({ Item: { PK: { S: 'W#1' } } }));
    expect((await ours.client.send(get)).Item).toEqual({ PK: { S: 'W#1' } });
    expect(ours.walks).toEqual({ input: 0, output: 0 });

    const refusal = JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'no' });
    const failing = countingClient({ ...SDK_CLIENT_DEFAULTS }, refusal, 400);
    await expect(failing.client.send(get)).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(failing.walks).toEqual({ input: 0, output: 0 });

    // The SDK's default: both walked on every request (what the defaults exist to avoid).
    const plain = countingClient({}, JSON.stringify({ Item: { PK: { S: 'W#1' } } }));
    await plain.client.send(get);
    expect(plain.walks).toEqual({ input: 1, output: 1 });
    // …and the request again for the error log line of a refusal.
    const plainFailing = countingClient({}, refusal, 400);
    await expect(plainFailing.client.send(get)).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(plainFailing.walks).toEqual({ input: 1, output: 0 });
  });

  it('are all made with the defaults, in every function and the local runtime', () => {
    const files = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.ts') ? [join(dir, f)] : []));
    const made = [...files('functions'), ...files('infra/local'), ...files('lib')].flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/new (\w+Client)\(([^)]*)\)/g)].map((m) => ({ f, client: m[1]!, args: m[2]! })));
    const sdk = made.filter((m) => /^(DynamoDB|DynamoDBStreams|SQS|SES|SESv2|KMS|STS|APIGateway)Client$/.test(m.client));
    expect(sdk.length).toBeGreaterThan(10);
    expect(sdk.filter((m) => !m.args.startsWith('{ ...SDK_CLIENT_DEFAULTS'))).toEqual([]);
  });
});
