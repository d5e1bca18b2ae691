import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGroupHandler } from '../../lib/http/router';
import { metaContracts } from '../../lib/meta/contract';
import { metaOperations } from '../../lib/meta/operations';

const logger = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
const context = { getRemainingTimeInMillis: () => 10000, awsRequestId: 'r', functionName: 'f' } as unknown as Context;
const get = (asset: string) =>
  ({ httpMethod: 'GET', resource: '/docs/{asset}', path: `/docs/${asset}`, headers: {}, pathParameters: { asset }, queryStringParameters: null, body: null, requestContext: { authorizer: null } }) as unknown as APIGatewayProxyEvent;

describe('docs assets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docs-assets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a renderer file missing from the package is a plain 500 (no path), served once it is there', async () => {
    const h = createGroupHandler({ group: 'meta', contracts: metaContracts, impls: metaOperations({ docsAssetsDir: dir }), logger });
    const missing = await h(get('swagger-ui.css'), context);
    expect(missing.statusCode).toBe(500);
    expect(JSON.parse(missing.body)).toEqual({ error: 'Internal server error', code: 'internal_error' });
    writeFileSync(join(dir, 'swagger-ui.css'), '.swagger-ui{}');
    const found = await h(get('swagger-ui.css'), context);
    expect(found.statusCode).toBe(200);
    expect(found.body).toBe('.swagger-ui{}');
    expect(found.headers?.['content-type']).toBe('text/css; charset=utf-8');
  });
});
