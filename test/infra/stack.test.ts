import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATEWAY_ERRORS } from '../../lib/service/gateway-responses';
import { OUTBOX_STREAM_FILTER, QUEUES, TABLE } from '../../lib/service/resources';
import { ROUTES } from '../../lib/service/routes';
import { createServiceApp } from '../../infra/service-app';
import { loadConfig } from '../../lib/config';

const asArray = (v: unknown) => (Array.isArray(v) ? v : [v]);

type Resources = Record<string, { Type: string; Properties: Record<string, any>; DeletionPolicy?: string }>;

const outdir = mkdtempSync(join(tmpdir(), 'cdk-test-'));
let template: Template;
let resources: Resources;

beforeAll(() => {
  const { app, stack } = createServiceApp({ authorizerCacheTtlSeconds: 30, throttleRateLimit: 100, throttleBurstLimit: 200 }, outdir);
  // Synthesizes with local esbuild bundling and runs cdk-nag: throws on any unacknowledged finding.
  app.synth();
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Resources;
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

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

  test('the service stack synthesized with no unacknowledged finding', () => {
    expect(resources).toBeDefined();
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
      } else {
        expect(found[0]!.AuthorizationType).toBe('CUSTOM');
        expect(found[0]!.AuthorizerId).toBeDefined();
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

  test('stage throttling, access logs and error logging are on', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200, LoggingLevel: 'ERROR', HttpMethod: '*', ResourcePath: '/*' }),
      ]),
    });
  });

  test('gateway-generated errors use the service error shape', () => {
    for (const [type, e] of Object.entries(GATEWAY_ERRORS)) {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        StatusCode: String(e.status),
        ResponseTemplates: { 'application/json': JSON.stringify({ error: e.error, code: e.code }) },
      });
    }
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
    ]);
  });

  test('the HMAC master is a KMS HMAC key, retained; no secret sits in any environment', () => {
    template.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' }),
    });
    const [keyId] = ofType('AWS::KMS::Key')[0]!;
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      if (fn.Properties.Handler !== 'index.handler') continue;
      const vars = fn.Properties.Environment.Variables as Record<string, unknown>;
      expect(Object.keys(vars).sort()).toEqual(
        ['INDY_NAMESPACE', 'ISSUER_KEY_TAG', 'KEY_BACKEND', 'MAC_KMS_KEY_ID', 'NODE_OPTIONS', 'POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_SERVICE_NAME', 'TABLE_NAME', 'WEBHOOK_QUEUE_URL'].sort(),
      );
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

  test('the authorizer may only query the lookup index and derive its MAC secret', () => {
    const policy = ofType('AWS::IAM::Policy').find(([id]) => id.startsWith('authorizerfunction'));
    expect(policy).toBeDefined();
    const actions = (policy![1].Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => asArray(s.Action));
    expect(new Set(actions)).toEqual(new Set(['logs:CreateLogStream', 'logs:PutLogEvents', 'dynamodb:Query', 'kms:GenerateMac']));
  });

  test('the OpenAPI function has no data or key access', () => {
    const policy = ofType('AWS::IAM::Policy').find(([id]) => id.startsWith('metafunction'));
    const actions = (policy![1].Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => asArray(s.Action));
    expect(actions.every((a) => a.startsWith('logs:'))).toBe(true);
  });
});

describe('bundles', () => {
  const assets = () =>
    ofType('AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties.Handler === 'index.handler')
      .map(([id, fn]) => [id, join(outdir, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`)] as const);

  test('every bundle stays under 600 KB (zod imported as a namespace, so without its locales)', () => {
    for (const [id, dir] of assets()) expect([id, statSync(join(dir, 'index.mjs')).size < 600_000]).toEqual([id, true]);
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
    expect(m.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual([OUTBOX_STREAM_FILTER]);
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
    expect(alarms).toHaveLength(QUEUES.length + 1);
    for (const a of alarms) expect(a).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });

  test('only the webhook functions may send to the webhook queue', () => {
    const senders = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('sqs:SendMessage'))
      .map(([id]) => id.replace(/function.*/, ''));
    expect(senders.sort()).toEqual(['webhookdelivery', 'webhookrelay', 'webhooks']);
  });

  test('the delivery worker may read and update the table and derive signing secrets, nothing else on data', () => {
    const policy = ofType('AWS::IAM::Policy').find(([id]) => id.startsWith('webhookdeliveryfunction'))!;
    const actions = (policy[1].Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => asArray(s.Action));
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(actions).toContain('kms:GenerateMac');
  });
});

describe('issuer keys and DIDs', () => {
  const statementsOf = (prefix: string) =>
    ofType('AWS::IAM::Policy')
      .filter(([id]) => id.startsWith(prefix))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Record<string, any>[]);

  test('only the DID function may create issuer keys, and only tagged for this stack, SIGN_VERIFY, Ed25519 or P-256', () => {
    const creators = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes('kms:CreateKey'))
      .map(([id]) => id.replace(/function.*/, ''));
    expect(creators).toEqual(['dids']);
    const create = statementsOf('didsfunction').find((s) => s.Action === 'kms:CreateKey')!;
    expect(create.Condition).toEqual({
      StringEquals: { 'aws:RequestTag/service': 'CredentialService', 'kms:KeyUsage': 'SIGN_VERIFY' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': ['service', 'wallet_id'] },
      'ForAnyValue:StringEquals': { 'kms:KeySpec': ['ECC_NIST_EDWARDS25519', 'ECC_NIST_P256'] },
    });
  });

  test('tagging is limited to the key being created (no service tag yet), with our tag keys and this stack as service', () => {
    const tag = statementsOf('didsfunction').find((s) => s.Action === 'kms:TagResource')!;
    expect(tag.Condition).toEqual({
      StringEquals: { 'aws:RequestTag/service': 'CredentialService' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': ['service', 'wallet_id'] },
      Null: { 'aws:ResourceTag/service': 'true' },
    });
    expect(statementsOf('didsfunction').flatMap((s) => asArray(s.Action))).not.toContain('kms:UntagResource');
  });

  test("signing and public-key reads are limited to this stack's keys by their tag", () => {
    const use = statementsOf('didsfunction').find((s) => asArray(s.Action).includes('kms:Sign'))!;
    expect(asArray(use.Action).sort()).toEqual(['kms:GetPublicKey', 'kms:Sign']);
    expect(use.Condition).toEqual({ StringEquals: { 'aws:ResourceTag/service': 'CredentialService' } });
    expect(JSON.stringify(use.Resource)).toContain(':key/*');
  });

  test('the public resolver may only query the lookup index', () => {
    const actions = statementsOf('resolverfunction').flatMap((s) => asArray(s.Action));
    expect(new Set(actions)).toEqual(new Set(['logs:CreateLogStream', 'logs:PutLogEvents', 'dynamodb:Query']));
  });

  test('the TAA (a real-length text from a file) ships bundled with the DID function only; no environment outgrows Lambda\'s 4 KB', () => {
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
      expect(withTaa.map(([id]) => id.replace(/function.*/, ''))).toEqual(['dids']);
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
