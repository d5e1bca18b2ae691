import { loadConfig } from '../../lib/config';
import { ALL_CONTRACTS } from '../../lib/openapi/all-contracts';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { ROUTES } from '../../lib/service/routes';

describe('config', () => {
  test('parses the deployed and local shapes and names what is wrong', () => {
    expect(loadConfig({ TABLE_NAME: 't', KEY_BACKEND: 'kms', MAC_KMS_KEY_ID: 'arn', ISSUER_KEY_TAG: 'stack' })).toMatchObject({ keyBackend: 'kms', tableName: 't' });
    expect(() => loadConfig({ TABLE_NAME: 't', KEY_BACKEND: 'kms', MAC_KMS_KEY_ID: 'arn' })).toThrow(/issuerKeyTag/);
    expect(loadConfig({ TABLE_NAME: 't', KEY_BACKEND: 'local', LOCAL_MASTER_KEY: 'ab'.repeat(32) })).toMatchObject({ keyBackend: 'local' });
    expect(() => loadConfig({ KEY_BACKEND: 'kms' })).toThrow(/tableName/);
    expect(() => loadConfig({ TABLE_NAME: 't', KEY_BACKEND: 'local', LOCAL_MASTER_KEY: 'short' })).toThrow(/LOCAL_MASTER_KEY/);
    expect(Object.isFrozen(loadConfig({ TABLE_NAME: 't', MAC_KMS_KEY_ID: 'k', ISSUER_KEY_TAG: 's' }))).toBe(true);
  });

  test('the TAA is configured only as a whole; a broken mechanisms list is an error', () => {
    const local = { TABLE_NAME: 't', KEY_BACKEND: 'local', LOCAL_MASTER_KEY: 'ab'.repeat(32) };
    expect(loadConfig(local).taa).toBeUndefined();
    expect(loadConfig({ ...local, TAA_TEXT: 'x', TAA_VERSION: '2', TAA_AML: '{"click":"clicked"}' }).taa).toEqual({ text: 'x', version: '2', aml: { click: 'clicked' }, amlVersion: '1.0' });
    expect(() => loadConfig({ ...local, TAA_TEXT: 'x', TAA_VERSION: '2', TAA_AML: '{' })).toThrow(/TAA_AML is not JSON/);
    expect(() => loadConfig({ ...local, TAA_TEXT: 'x', TAA_VERSION: '2', TAA_AML: '{}' })).toThrow(/mechanism/);
    expect(() => loadConfig({ ...local, INDY_NAMESPACE: 'bad ns' })).toThrow(/INDY_NAMESPACE/);
    // The deployed form: a bundled file; a missing or broken one stops the function at cold start.
    expect(() => loadConfig({ ...local, TAA_FILE: 'no-such-taa.json', LAMBDA_TASK_ROOT: '/nonexistent' })).toThrow(/TAA_FILE \/nonexistent\/no-such-taa.json cannot be read/);
  });

  test("the docs renderer's files: beside the handler deployed, wherever DOCS_ASSETS_DIR says locally", () => {
    const local = { TABLE_NAME: 't', KEY_BACKEND: 'local', LOCAL_MASTER_KEY: 'ab'.repeat(32) };
    expect(loadConfig({ ...local, LAMBDA_TASK_ROOT: '/var/task' }).docsAssetsDir).toBe('/var/task');
    expect(loadConfig({ ...local, LAMBDA_TASK_ROOT: '/var/task', DOCS_ASSETS_DIR: 'docs' }).docsAssetsDir).toBe('/var/task/docs');
    expect(loadConfig({ ...local, DOCS_ASSETS_DIR: '/srv/node_modules/swagger-ui-dist' }).docsAssetsDir).toBe('/srv/node_modules/swagger-ui-dist');
  });
});

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument(ALL_CONTRACTS);

  test('has every route of the route table, with unique operation ids', () => {
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p)) as { operationId: string }[];
    expect(ops).toHaveLength(ROUTES.length);
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(ROUTES.length);
  });

  test('request schemas come from the validation schemas (strict, both wallet_id forms)', () => {
    const create = (doc.paths['/api/apikey/create'] as any).post;
    const schema = create.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['wallet_id', 'roles']));
    expect(schema.additionalProperties).toBe(false);
    expect(JSON.stringify(schema.properties.wallet_id)).toMatch(/integer/);
    expect(JSON.stringify(schema.properties.wallet_id)).toMatch(/string/);
    expect(schema.properties.roles.items.enum).toEqual(['admin']);
  });

  test('the published status lists are public JWTs with an ETag and a documented 304', () => {
    for (const [path, type] of [['/status-lists/{public_ref}/{def_id}/{list}/ietf', 'application/statuslist+jwt'], ['/status-lists/{public_ref}/{def_id}/{list}/w3c', 'application/vc+jwt']] as const) {
      const op = (doc.paths[path] as any).get;
      expect(op.security).toEqual([]);
      expect(Object.keys(op.responses['200'].content)).toEqual([type]);
      expect(Object.keys(op.responses['200'].headers)).toEqual(['ETag', 'Cache-Control']);
      expect(op.responses['304']).toEqual({ description: expect.any(String) });
    }
  });

  test('the API reference routes are public and answer HTML, scripts and stylesheets', () => {
    const page = (doc.paths['/docs'] as any).get;
    expect(page.security).toEqual([]);
    expect(Object.keys(page.responses['200'].content)).toEqual(['text/html']);
    expect(page.responses['200'].content['text/html'].schema).toMatchObject({ type: 'string' });
    const asset = (doc.paths['/docs/{asset}'] as any).get;
    expect(asset.security).toEqual([]);
    expect(Object.keys(asset.responses['200'].content)).toEqual(['text/javascript', 'text/css']);
    expect(asset.parameters).toEqual([expect.objectContaining({ name: 'asset', in: 'path', required: true })]);
    expect(asset.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error', type: 'object', properties: { code: { type: 'string', enum: ['asset_not_found'] } } });
    // The OpenID4VP request object is a JWT of its own media type (RFC 9101), public and never cached.
    const requestObject = (doc.paths['/oid4vp/{public_ref}/request/{presentation_id}'] as any).get;
    expect(requestObject.security).toEqual([]);
    expect(Object.keys(requestObject.responses['200'].content)).toEqual(['application/oauth-authz-req+jwt']);
    // A context file is JSON-LD (its own media type, what JSON-LD processors ask for), public.
    const contextFile = (doc.paths['/context/{id}'] as any).get;
    expect(contextFile.security).toEqual([]);
    expect(Object.keys(contextFile.responses['200'].content)).toEqual(['application/ld+json']);
    // An AnonCreds tails file is bytes, public.
    const tailsFile = (doc.paths['/dids/{id}/anoncreds/tails/{tails_hash}'] as any).get;
    expect(tailsFile.security).toEqual([]);
    expect(Object.keys(tailsFile.responses['200'].content)).toEqual(['application/octet-stream']);
    // Every other operation answers JSON (the resolver also negotiates, below).
    const others = ROUTES.filter((r) => !r.path.startsWith('/docs') && !['resolveDid', 'getRequestObject', 'getContextFile', 'getTailsFile'].includes(r.operationId) && !r.path.startsWith('/status-lists/'));
    // ...except a 204, and the DIDComm endpoint's 202 Accepted, which have no body.
    for (const r of others) {
      const op = (doc.paths[r.path] as any)[r.method.toLowerCase()];
      const [status, success] = Object.entries(op.responses as Record<string, { content?: object }>)[0]!;
      const noBody = status === '204' || r.operationId === 'postDidcommEnvelope';
      expect([r.operationId, status, Object.keys(success.content ?? {})]).toEqual([r.operationId, status, noBody ? [] : ['application/json']]);
    }
  });

  test('the resolver declares each media type it negotiates, with its body', () => {
    const content = (doc.paths['/1.0/identifiers/{did}'] as any).get.responses['200'].content;
    const result = { $ref: '#/components/schemas/DidResolutionResult' };
    const document = { $ref: '#/components/schemas/DidDocument' };
    const schemas = Object.fromEntries(Object.entries(content as Record<string, { schema: unknown }>).map(([type, media]) => [type, media.schema]));
    expect(schemas).toEqual({
      'application/json': result,
      'application/ld+json;profile="https://w3id.org/did-resolution"': result,
      'application/did+ld+json': document,
      'application/did+json': document,
    });
    // The example (a resolution result) is shown on the first, default media type.
    expect(content['application/json'].example).toMatchObject({ didDocument: expect.any(Object) });
  });

  test('every $ref resolves inside the document (named zod schemas become components)', () => {
    const refs = new Set([...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!));
    expect(refs).toContain('#/components/schemas/EventEnvelope');
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\/[^/]+$/);
      expect((doc.components.schemas as Record<string, unknown>)[ref.split('/').pop()!]).toBeDefined();
    }
  });

  test('path parameters are declared', () => {
    const get = (doc.paths['/api/subwallets/{wallet_id}'] as any).get;
    expect(get.parameters).toEqual([expect.objectContaining({ name: 'wallet_id', in: 'path', required: true })]);
  });
});
