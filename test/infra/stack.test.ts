import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_DEFAULTS } from '../../lib/service/api-settings';
import { FUNCTION_NAMES } from '../../lib/service/access';
import { ENV } from '../../lib/service/env-names';
import { GATEWAY_ERRORS } from '../../lib/service/gateway-responses';
import { OUTBOX_STREAM_FILTERS, QUEUES, TABLE, queueUrlEnvName } from '../../lib/service/resources';
import { ROUTES } from '../../lib/service/routes';
import { createServiceApp, REPO_ROOT } from '../../infra/service-app';
import { BUNDLE_ALIASES, BUNDLE_BUDGET_BYTES, BUNDLE_BUDGET_OVERRIDES, ServiceFunction } from '../../infra/constructs/service-function';
import { loadConfig } from '../../lib/config';
import type { RawRepresentation } from '../../lib/http/contract';
import { DOCS_RENDERER_FILES, docsRendererDir } from '../../lib/service/docs-assets';
import { metaOperations } from '../../lib/meta/operations';

const asArray = (v: unknown) => (Array.isArray(v) ? v : [v]);

type Resources = Record<string, { Type: string; Properties: Record<string, any>; DeletionPolicy?: string }>;

const outdir = mkdtempSync(join(tmpdir(), 'cdk-test-'));
let template: Template;
let resources: Resources;

beforeAll(() => {
  // Environment-agnostic (no account or region), as `cdk synth` without a profile behaves in some
  // setups; test/infra/declared-access.test.ts synthesizes with a concrete account and region.
  const { app, stack } = createServiceApp({ authorizerCacheTtlSeconds: 30, alarmEmail: 'ops@example.com' }, outdir, {});
  // Synthesizes with local esbuild bundling and runs cdk-nag: throws on any unacknowledged finding.
  app.synth();
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Resources;
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** A cycle among the resources' dependencies (Ref, Fn::GetAtt, DependsOn), or null. */
function dependencyCycle(all: Resources): string[] | null {
  const deps = new Map<string, Set<string>>();
  const walk = (v: unknown, into: Set<string>) => {
    if (Array.isArray(v)) v.forEach((x) => walk(x, into));
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.Ref === 'string' && o.Ref in all) into.add(o.Ref);
      if (Array.isArray(o['Fn::GetAtt']) && String(o['Fn::GetAtt'][0]) in all) into.add(String(o['Fn::GetAtt'][0]));
      Object.values(o).forEach((x) => walk(x, into));
    }
  };
  for (const [id, r] of Object.entries(all)) {
    const d = new Set<string>();
    walk(r.Properties, d);
    for (const x of [(r as { DependsOn?: string | string[] }).DependsOn ?? []].flat()) d.add(x);
    deps.set(id, d);
  }
  const state = new Map<string, 'open' | 'done'>();
  const visit = (id: string, path: string[]): string[] | null => {
    if (state.get(id) === 'done') return null;
    if (state.get(id) === 'open') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'open');
    for (const d of deps.get(id) ?? []) {
      const c = visit(d, [...path, id]);
      if (c) return c;
    }
    state.set(id, 'done');
    return null;
  };
  for (const id of deps.keys()) {
    const c = visit(id, []);
    if (c) return c;
  }
  return null;
}

test('the cycle check finds a cycle when there is one', () => {
  expect(dependencyCycle({ A: { Type: 't', Properties: { x: { Ref: 'B' } } }, B: { Type: 't', Properties: { y: { 'Fn::GetAtt': ['A', 'Arn'] } } } })).toEqual(['A', 'B', 'A']);
  expect(dependencyCycle({ A: { Type: 't', Properties: { x: { Ref: 'B' } } }, B: { Type: 't', Properties: {} } })).toBeNull();
});

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

describe('cdk-nag', () => {
  test('the AwsSolutions pack reports unacknowledged findings as a failed synth (the check can fail)', () => {
    const app = new App();
    const stack = new Stack(app, 'Probe');
    new iam.Role(stack, 'Admin', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AdministratorAccess')],
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/AwsSolutions-IAM4/);
  });

  test('the service stack synthesized with no unacknowledged finding and no circular dependency', () => {
    expect(resources).toBeDefined();
    // CloudFormation's own validation reports (as warnings) what a deploy would refuse.
    // CloudFormation refuses a template whose resources depend on each other in a circle.
    expect(dependencyCycle(resources)).toBeNull();
  });
});

describe('API routes', () => {
  const methods = () => ofType('AWS::ApiGateway::Method').map(([, r]) => r.Properties);

  test('every route of the route table is deployed once, with the authorizer exactly on non-public routes', () => {
    for (const route of ROUTES) {
      const found = methods().filter((m) => m.OperationName === route.operationId);
      expect(found).toHaveLength(1);
      expect(found[0]!.HttpMethod).toBe(route.method);
      if (route.auth === 'public') {
        expect(found[0]!.AuthorizationType).toBe('NONE');
        expect(found[0]!.AuthorizerId).toBeUndefined();
        expect(found[0]!.ApiKeyRequired ?? false).toBe(false);
      } else {
        expect(found[0]!.AuthorizationType).toBe('CUSTOM');
        expect(found[0]!.AuthorizerId).toBeDefined();
        // The caller's usage-plan key (from the authorizer) is what per-tenant throttling counts.
        expect(found[0]!.ApiKeyRequired).toBe(true);
      }
    }
    expect(methods()).toHaveLength(ROUTES.length);
  });

  test("the contract's section 4.6 paths are all present, super-admin only", () => {
    const contract46 = [
      ['POST', '/api/subwallet/create'],
      ['GET', '/api/subwallets'],
      ['GET', '/api/subwallets/{wallet_id}'],
      ['POST', '/api/apikey/create'],
      ['POST', '/api/apikey/revoke'],
    ];
    for (const [method, path] of contract46) {
      const route = ROUTES.find((r) => r.method === method && r.path === path);
      expect(route?.auth).toBe('superadmin');
    }
  });

  test('a TOKEN authorizer on x-api-key with the configured cache TTL', () => {
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.x-api-key',
      AuthorizerResultTtlInSeconds: 30,
    });
  });

  test("the stage's default method limit, access logs and error logging are on; every public route has its own, lower limit", () => {
    const stage = ofType('AWS::ApiGateway::Stage')[0]![1].Properties;
    expect(stage.AccessLogSetting).toMatchObject({ DestinationArn: expect.anything() });
    const settings = stage.MethodSettings as Record<string, any>[];
    expect(settings).toContainEqual(
      expect.objectContaining({ ThrottlingRateLimit: API_DEFAULTS.throttleRateLimit, ThrottlingBurstLimit: API_DEFAULTS.throttleBurstLimit, LoggingLevel: 'ERROR', HttpMethod: '*', ResourcePath: '/*' }),
    );
    const publicRoutes = ROUTES.filter((r) => r.auth === 'public');
    for (const r of publicRoutes) {
      // CloudFormation's path form: a leading '/', then the path with each '/' as '~1'.
      expect(settings).toContainEqual(
        expect.objectContaining({ HttpMethod: r.method, ResourcePath: `/${r.path.replace(/\//g, '~1')}`, ThrottlingRateLimit: r.protocol ? API_DEFAULTS.protocolThrottleRateLimit : API_DEFAULTS.publicThrottleRateLimit }),
      );
    }
    // Each public route is held well below what an authenticated method may take.
    expect(API_DEFAULTS.publicThrottleRateLimit).toBeLessThan(API_DEFAULTS.throttleRateLimit);
    expect(API_DEFAULTS.protocolThrottleRateLimit).toBeLessThan(API_DEFAULTS.throttleRateLimit);
    expect(publicRoutes.some((r) => r.protocol)).toBe(true);
  });

  test('per-tenant throttling: usage plans keyed by the authorizer, the base key in its own plan', () => {
    expect(ofType('AWS::ApiGateway::RestApi')[0]![1].Properties.ApiKeySourceType).toBe('AUTHORIZER');
    const plans = ofType('AWS::ApiGateway::UsagePlan').map(([, p]) => p.Properties);
    expect(plans.map((p) => [p.UsagePlanName, p.Throttle]).sort()).toEqual([
      ['CredentialService-platform', { RateLimit: API_DEFAULTS.platformThrottleRateLimit, BurstLimit: API_DEFAULTS.platformThrottleBurstLimit }],
      ['CredentialService-tenants', { RateLimit: API_DEFAULTS.tenantThrottleRateLimit, BurstLimit: API_DEFAULTS.tenantThrottleBurstLimit }],
    ]);
    expect(ofType('AWS::ApiGateway::UsagePlanKey')).toHaveLength(1); // the base key's; wallets' keys are added at run time
  });

  test('gateway-generated errors use the service error shape and keep API Gateway\'s status unless we mean to change it', () => {
    const responses = ofType('AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties);
    for (const [type, e] of Object.entries(GATEWAY_ERRORS)) {
      const r = responses.find((p) => p.ResponseType === type)!;
      expect(r.ResponseTemplates).toEqual({ 'application/json': JSON.stringify({ error: e.error, code: e.code }) });
      expect(r.StatusCode).toBe('status' in e ? String(e.status) : undefined);
    }
    // A status on a DEFAULT_* response would rewrite every untyped 4xx/5xx (WAF 403, 415, 429, 502, 504).
    expect(responses.find((p) => p.ResponseType === 'DEFAULT_4XX')!.StatusCode).toBeUndefined();
    expect(responses.find((p) => p.ResponseType === 'DEFAULT_5XX')!.StatusCode).toBeUndefined();
  });
});

describe('data and keys', () => {
  test('one on-demand table with PITR, TTL, retain and the lookup GSI', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(1);
    const [, table] = tables[0]!;
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      DeletionProtectionEnabled: true,
    });
    expect(table.Properties.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({ IndexName: TABLE.gsi1.name, Projection: { ProjectionType: 'ALL' } }),
      // The public resolver's index: published DIDs only, and only what a document needs.
      expect.objectContaining({
        IndexName: TABLE.publicDids.name,
        KeySchema: [{ AttributeName: TABLE.publicDids.partitionKey, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...TABLE.publicDids.projection] },
      }),
    ]);
  });

  test('the HMAC master is a KMS HMAC key, retained; no secret sits in any environment', () => {
    const keyId = ofType('AWS::KMS::Key').find(([, k]) => k.Properties.KeySpec === 'HMAC_256')![0];
    template.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' }),
    });
    // Only the configuration the service reads (lib/service/env-names.ts), nothing else.
    const known = new Set<string>([...Object.values(ENV), ...QUEUES.map((q) => queueUrlEnvName(q.id)), 'NODE_OPTIONS']);
    const keyBackendLocalOnly = [ENV.localMasterKey];
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      if (fn.Properties.Handler !== 'index.handler') continue;
      const vars = fn.Properties.Environment.Variables as Record<string, unknown>;
      for (const name of Object.keys(vars)) {
        expect(known.has(name)).toBe(true);
        expect(keyBackendLocalOnly).not.toContain(name);
      }
      expect(vars.KEY_BACKEND).toBe('kms');
      expect(vars.MAC_KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    }
  });

  test('each work queue has its DLQ with the defined receive count', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues).toHaveLength(QUEUES.length * 2 + 1); // + the relay's on-failure destination
    for (const q of QUEUES) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        VisibilityTimeout: q.visibilityTimeoutSeconds,
        RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: q.maxReceiveCount },
      });
    }
  });
});

describe('functions and IAM', () => {
  test('every function runs nodejs22.x on arm64 with its own log group', () => {
    const fns = ofType('AWS::Lambda::Function');
    expect(fns.length).toBeGreaterThanOrEqual(4);
    for (const [, fn] of fns) {
      if (fn.Properties.Handler !== 'index.handler') continue; // CDK's own helpers
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.LoggingConfig).toMatchObject({ LogFormat: 'JSON', LogGroup: { Ref: expect.any(String) } });
    }
  });

  const statements = () =>
    ofType('AWS::IAM::Policy').flatMap(([id, p]) =>
      (p.Properties.PolicyDocument.Statement as Record<string, any>[]).map((s) => ({ id, ...s }) as Record<string, any>),
    );

  test('no wildcard actions, and data actions only on the table and its index', () => {
    for (const s of statements()) {
      for (const action of asArray(s.Action)) expect(String(action)).not.toMatch(/\*/);
      // ListStreams is not resource-scopable (AWS); the stream reads themselves are scoped.
      if (asArray(s.Action).some((a) => String(a).startsWith('dynamodb:') && a !== 'dynamodb:ListStreams')) {
        for (const r of asArray(s.Resource)) expect(JSON.stringify(r)).not.toBe('"*"');
      }
    }
  });

  test('no statement denies: every permission is an Allow built from a declaration (the evaluator relies on it)', () => {
    for (const st of statements()) expect(st.Effect).toBe('Allow');
  });

  test('one function per route group and worker, as lib/service/access.ts names them', () => {
    const ids = ofType('AWS::Lambda::Function').map(([id]) => id).filter((id) => /functionFn/.test(id));
    expect(ids.map((id) => id.replace(/functionFn.*/, '')).sort()).toEqual(FUNCTION_NAMES.map((n) => n.replace(/-/g, '')).sort());
  });
});

describe('bundles', () => {
  const assets = () =>
    ofType('AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties.Handler === 'index.handler')
      .map(([id, fn]) => [id, join(outdir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`)] as const);

  test('every bundle stays within its budget (600 KB unless a function has a stated reason for more)', () => {
    const budgetOf = (id: string) => {
      const name = Object.keys(BUNDLE_BUDGET_OVERRIDES).find((n) => id.startsWith(`${n.replace(/-/g, '')}function`));
      return name ? BUNDLE_BUDGET_OVERRIDES[name]! : BUNDLE_BUDGET_BYTES;
    };
    expect(Object.keys(BUNDLE_BUDGET_OVERRIDES).every((n) => assets().some(([id]) => id.startsWith(`${n.replace(/-/g, '')}function`)))).toBe(true);
    for (const [id, dir] of assets()) expect([id, statSync(join(dir, 'index.mjs')).size <= budgetOf(id)]).toEqual([id, true]);
  });

  test("a bundled SDK client takes Lambda's credentials from the environment, and says so when they are absent", async () => {
    // The same alias the deployed bundles get, applied to a probe that builds an SDK client as a function does.
    const { build } = await import('esbuild');
    const dir = mkdtempSync(join(tmpdir(), 'creds-probe-'));
    try {
      writeFileSync(
        join(dir, 'probe.mjs'),
        `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
         const c = new DynamoDBClient({ region: 'eu-central-1' });
         try { const id = await c.config.credentials(); console.log(JSON.stringify({ ok: id.accessKeyId, token: id.sessionToken })); }
         catch (e) { console.log(JSON.stringify({ error: e.name })); }`,
      );
      await build({
        entryPoints: [join(dir, 'probe.mjs')],
        outfile: join(dir, 'out.mjs'),
        bundle: true,
        platform: 'node',
        format: 'esm',
        absWorkingDir: REPO_ROOT,
        nodePaths: [join(REPO_ROOT, 'node_modules')],
        alias: BUNDLE_ALIASES,
        banner: { js: "import { createRequire as __createRequire } from 'module'; const require = __createRequire(import.meta.url);" },
        logLevel: 'silent',
      });
      const out = readFileSync(join(dir, 'out.mjs'), 'utf8');
      expect(out).not.toMatch(/sso-oidc|SSOOIDC|fromTokenFile/);
      const run = (env: Record<string, string>) => JSON.parse(spawnSync(process.execPath, [join(dir, 'out.mjs')], { env: { PATH: process.env.PATH!, ...env }, encoding: 'utf8' }).stdout);
      expect(run({ AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'session' })).toEqual({ ok: 'AKIDEXAMPLE', token: 'session' });
      expect(run({})).toEqual({ error: 'CredentialsProviderError' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('source maps carry no sources and map only our own files', () => {
    for (const [, dir] of assets()) {
      const map = JSON.parse(readFileSync(join(dir, 'index.mjs.map'), 'utf8'));
      expect(map.sourcesContent).toBeUndefined();
      expect(map.sources.length).toBeGreaterThan(0);
      expect(map.sources.filter((s: string) => s.includes('node_modules/'))).toEqual([]);
    }
  });

  test('a stack trace through a deployed bundle is mapped to our .ts files (NODE_OPTIONS as deployed)', () => {
    const [, dir] = assets().find(([id]) => id.startsWith('metafunction'))!;
    const fn = ofType('AWS::Lambda::Function').find(([id]) => id.startsWith('metafunction'))![1];
    const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
    expect(variables.NODE_OPTIONS).toBe('--enable-source-maps');
    // The handler reads the event first; the trace is taken with its frames on the stack.
    const script = `const { handler } = await import(${JSON.stringify(join(dir, 'index.mjs'))});
      await handler(new Proxy({}, { get() { console.log(new Error('probe').stack); process.exit(0); } }), {});`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      // The deployed environment, CloudFormation references replaced by a placeholder.
      env: { PATH: process.env.PATH, ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : 'placeholder'])) },
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/\(.*\/lib\/[a-z/-]+\.ts:\d+:\d+\)/);
  });
});

describe('events and webhooks', () => {
  const functionId = (prefix: string) => ofType('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix))![0];
  const mappings = () => ofType('AWS::Lambda::EventSourceMapping').map(([, r]) => r.Properties);

  test('the table streams new images (the outbox)', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: TABLE.streamViewType } });
  });

  test('the relay reads only new outbox items from the stream, reports item failures, and parks what it cannot relay', () => {
    const m = mappings().find((p) => JSON.stringify(p.FunctionName).includes(functionId('webhookrelayfunction')))!;
    expect(m).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRecordAgeInSeconds: 86400,
      DestinationConfig: { OnFailure: { Destination: expect.anything() } },
    });
    expect(m.MaximumRetryAttempts ?? -1).toBe(-1); // retried until the record's age limit, not a count
    expect(JSON.stringify(m.EventSourceArn)).toContain('StreamArn');
    expect(m.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual(OUTBOX_STREAM_FILTERS);
  });

  test('the delivery worker consumes the webhook queue with partial batch responses', () => {
    const m = mappings().find((p) => JSON.stringify(p.FunctionName).includes(functionId('webhookdeliveryfunction')))!;
    expect(m).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: 20 } });
    expect(JSON.stringify(m.EventSourceArn)).toContain('webhookqueue');
    // AWS's advice: visibility timeout at least 6 x the function timeout.
    const worker = resources[functionId('webhookdeliveryfunction')]!;
    expect(QUEUES.find((q) => q.id === 'webhook')!.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * worker.Properties.Timeout);
  });

  test('every dead-letter store has an alarm on its first message', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const dlq = alarms.filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(dlq).toHaveLength(QUEUES.length + 1);
    for (const a of dlq) expect(a).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });
});

describe('alarms reach a person', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const topicId = () => ofType('AWS::SNS::Topic')[0]![0];

  test('every alarm notifies the alarm topic when it fires and when it clears; the topic mails the configured address', () => {
    expect(alarms().length).toBeGreaterThan(0);
    for (const a of alarms()) {
      expect(a.AlarmActions).toEqual([{ Ref: topicId() }]);
      expect(a.OKActions).toEqual([{ Ref: topicId() }]);
    }
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId() } });
    // CloudWatch can publish only to a topic under a key whose policy lets it.
    const keyRef = ofType('AWS::SNS::Topic')[0]![1].Properties.KmsMasterKeyId;
    const key = resources[keyRef['Fn::GetAtt'][0]]!;
    expect(JSON.stringify(key.Properties.KeyPolicy)).toContain('cloudwatch.amazonaws.com');
  });

  test("the relay's iterator age, each function's errors and throttles, API 5xx and authorizer failures are watched", () => {
    const by = (name: string, ns?: string) => alarms().filter((a) => a.MetricName === name && (!ns || a.Namespace === ns));
    expect(by('IteratorAge', 'AWS/Lambda')).toHaveLength(1);
    expect(by('Throttles', 'AWS/Lambda')).toHaveLength(FUNCTION_NAMES.length);
    // The authorizer's refusals are Lambda errors by design; its real failures have their own metric.
    expect(by('Errors', 'AWS/Lambda')).toHaveLength(FUNCTION_NAMES.length - 1);
    expect(by('5XXError', 'AWS/ApiGateway')).toHaveLength(1);
    expect(by('AuthorizerFailures')).toHaveLength(1);
  });
});

describe('the API reference page', () => {
  test("the API reference renderer's files ship beside the meta handler, outside its code, where the handler looks for them", async () => {
    const [id, fn] = Object.entries(resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('metafunction'))!;
    const assetDir = join(outdir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
    expect(readdirSync(assetDir).sort()).toEqual(['index.mjs', 'index.mjs.map', ...Object.keys(DOCS_RENDERER_FILES)].sort());
    for (const name of Object.keys(DOCS_RENDERER_FILES)) {
      expect(readFileSync(join(assetDir, name)).equals(readFileSync(join(docsRendererDir(), name)))).toBe(true);
    }
    // The renderer is not bundled into the code.
    expect(statSync(join(assetDir, 'index.mjs')).size).toBeLessThan(statSync(join(assetDir, 'swagger-ui-bundle.js')).size / 2);
    const config = loadConfig({ KEY_BACKEND: 'local', TABLE_NAME: 't', LOCAL_MASTER_KEY: 'ab'.repeat(32), LAMBDA_TASK_ROOT: assetDir });
    const css = await metaOperations({ docsAssetsDir: config.docsAssetsDir }).getDocsAsset({ params: { asset: 'swagger-ui.css' } } as never);
    expect((css as RawRepresentation).body).toBe(readFileSync(join(assetDir, 'swagger-ui.css'), 'utf8'));
    // Only the meta function carries them.
    for (const [other, r] of ofType('AWS::Lambda::Function')) {
      if (other === id || !r.Properties.Code?.S3Key) continue;
      const dir = join(outdir, `asset.${r.Properties.Code.S3Key.replace(/\.zip$/, '')}`);
      expect(readdirSync(dir)).not.toContain('swagger-ui-bundle.js');
    }
  });

  test('a bundled file to copy must exist at synth time', () => {
    const stack = new Stack(new App(), 'Probe');
    expect(
      () => new ServiceFunction(stack, 'Fn', { root: REPO_ROOT, name: 'meta', description: 'probe', environment: {}, files: { 'gone.js': { copyFrom: '/nonexistent/gone.js' } } }),
    ).toThrow(/gone.js: \/nonexistent\/gone.js does not exist/);
  });
});

describe('a custom domain', () => {
  test('is mapped at its root, so the OpenID4VCI 1.0 well-known paths reach the API; the functions publish under it', () => {
    const outdir2 = mkdtempSync(join(tmpdir(), 'cdk-domain-'));
    try {
      const arn = 'arn:aws:acm:eu-central-1:123456789012:certificate/11111111-2222-3333-4444-555555555555';
      const { stack } = createServiceApp({ customDomain: 'id.example.com', customDomainCertificateArn: arn }, outdir2, {});
      const t = Template.fromStack(stack);
      t.hasResourceProperties('AWS::ApiGateway::DomainName', { DomainName: 'id.example.com', RegionalCertificateArn: arn, SecurityPolicy: 'TLS_1_2', EndpointConfiguration: { Types: ['REGIONAL'] } });
      const mappings = Object.values(t.findResources('AWS::ApiGateway::BasePathMapping')) as { Properties: Record<string, unknown> }[];
      expect(mappings.map((m) => m.Properties.BasePath ?? '(root)')).toEqual(['(root)']);
      // The route the 1.0 location needs is a resource of the API, reachable once the domain maps the root.
      expect(ROUTES.some((r) => r.path.startsWith('/.well-known/openid-credential-issuer/'))).toBe(true);
      const fns = Object.values(t.findResources('AWS::Lambda::Function')) as { Properties: Record<string, any> }[];
      const issuer = fns.find((f) => f.Properties.Description?.startsWith('Public OpenID4VCI'));
      expect(issuer!.Properties.Environment.Variables.PUBLIC_BASE_URL).toBe('https://id.example.com');
      expect(() => createServiceApp({ customDomain: 'id.example.com' }, outdir2, {})).toThrow(/go together/);
    } finally {
      rmSync(outdir2, { recursive: true, force: true });
    }
  });
});

describe('the publication agreement', () => {
  test('the TAA (a real-length text from a file) ships bundled with the functions that read it only; no environment outgrows Lambda\'s 4 KB', () => {
    const outdir2 = mkdtempSync(join(tmpdir(), 'cdk-taa-'));
    try {
      const taa = { text: 'Publish responsibly. '.repeat(1000), version: '3', aml: { click: 'clicked' }, amlVersion: '2' };
      const file = join(outdir2, 'agreement.json');
      writeFileSync(file, JSON.stringify(taa));
      const { app, stack } = createServiceApp({ taaFile: file, indyNamespace: 'acme:test' }, outdir2);
      const assembly = app.synth();
      const t = Template.fromStack(stack);
      const fns = Object.entries(t.findResources('AWS::Lambda::Function')) as [string, { Properties: Record<string, any> }][];
      for (const [, fn] of fns) {
        const vars = fn.Properties.Environment?.Variables ?? {};
        expect(Buffer.byteLength(JSON.stringify(vars))).toBeLessThan(4096);
        expect(Object.keys(vars).filter((k) => k.startsWith('TAA_') && k !== 'TAA_FILE')).toEqual([]);
      }
      const withTaa = fns.filter(([, fn]) => fn.Properties.Environment?.Variables?.TAA_FILE);
      expect(withTaa.map(([id]) => id.replace(/function.*/, '')).sort()).toEqual(['dids', 'taa']);
      expect(withTaa[0]![1].Properties.Environment.Variables).toMatchObject({ TAA_FILE: 'taa.json', INDY_NAMESPACE: 'acme:test' });
      // The bundled asset holds the file; the function's config loader reads it from its code root.
      const assetDir = join(assembly.directory, `asset.${withTaa[0]![1].Properties.Code.S3Key.replace(/\.zip$/, '')}`);
      expect(JSON.parse(readFileSync(join(assetDir, 'taa.json'), 'utf8'))).toEqual(taa);
      const config = loadConfig({ KEY_BACKEND: 'local', TABLE_NAME: 't', LOCAL_MASTER_KEY: 'ab'.repeat(32), TAA_FILE: 'taa.json', LAMBDA_TASK_ROOT: assetDir });
      expect(config.taa).toEqual(taa);
      expect(() => createServiceApp({ taa: '{"text":"x"}' }, outdir2)).toThrow(/taa needs/);
    } finally {
      rmSync(outdir2, { recursive: true, force: true });
    }
  });
});
