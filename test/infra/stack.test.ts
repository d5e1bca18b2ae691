import { App, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_DEFAULTS, RESERVED_CONCURRENCY, SOURCE_LIMITS } from '../../lib/service/api-settings';
import { FUNCTION_NAMES, type FunctionName } from '../../lib/service/access';
import { FUNCTION_AREAS, ROOT_AREA } from '../../lib/service/areas';
import { ENV } from '../../lib/service/env-names';
import { GATEWAY_ERRORS, SOURCE_LIMITED } from '../../lib/service/gateway-responses';
import { OUTBOX_STREAM_FILTERS, QUEUES, TABLE, queueUrlEnvName } from '../../lib/service/resources';
import { DEFAULT_MAX_BODY_BYTES, ROUTES, type Route } from '../../lib/service/routes';
import { createServiceApp, REPO_ROOT } from '../../infra/service-app';
import { BUNDLE_ALIASES, BUNDLE_BUDGET_BYTES, BUNDLE_BUDGET_OVERRIDES, ESM_REQUIRE_BANNER, ServiceFunction } from '../../infra/constructs/service-function';
import { COMMON_RULES_COUNTED } from '../../infra/constructs/source-limits';
import { publicPathPatterns } from '../../lib/service/public-paths';
import { resourcePaths } from '../../infra/stacks/api-layout';
import { areaStackId, STAGE_NAME } from '../../infra/stacks/service-stack';
import { loadConfig } from '../../lib/config';
import type { RawRepresentation } from '../../lib/http/contract';
import { DOCS_RENDERER_FILES, docsRendererDir } from '../../lib/service/docs-assets';
import { metaOperations } from '../../lib/meta/operations';
import { resourcesOf, stackTemplates, type Located, type StackTemplate } from '../helpers/assembly';
import { ACCOUNT, AssemblyIam, REGION } from '../helpers/iam-eval';

const asArray = (v: unknown) => (Array.isArray(v) ? v : [v]);

type Resources = Record<string, { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; DependsOn?: string | string[] }>;

/** CloudFormation's ceiling is 500 resources a stack; this leaves room for what the contract still adds. */
const MAX_RESOURCES_PER_STACK = 300;
/** Skips esbuild (assets get placeholder hashes) where a test reads only the templates. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

const outdir = mkdtempSync(join(tmpdir(), 'cdk-test-'));
let stacks: StackTemplate[];
let resolver: AssemblyIam;

beforeAll(() => {
  // Environment-agnostic (no account or region), as `cdk synth` without a profile behaves in some
  // setups; test/infra/declared-access.test.ts synthesizes with a concrete account and region.
  const { app, stack } = createServiceApp({ authorizerCacheTtlSeconds: 30, alarmEmail: 'ops@example.com' }, outdir, {});
  // Synthesizes with local esbuild bundling and runs cdk-nag: throws on any unacknowledged finding.
  app.synth();
  stacks = stackTemplates(stack, outdir);
  resolver = new AssemblyIam(stacks);
}, 300_000);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const root = () => stacks[0]!;
const ofType = (type: string, within: readonly StackTemplate[] = stacks): Located[] => resourcesOf(within, type);
const props = (l: Located) => l.resource.Properties as Record<string, any>;
/** A value as CloudFormation resolves it in its template (parameters through the parent, nested outputs). */
const resolve = (l: { stack: StackTemplate }, v: unknown) => resolver.resolve(l.stack, v);
const ref = (l: Located) => resolver.refOf(l.stack, l.id);
const functionNamed = (name: FunctionName) => {
  const found = ofType('AWS::Lambda::Function').filter(({ id }) => id.startsWith(`${name.replace(/-/g, '')}functionFn`));
  if (found.length !== 1) throw new Error(`${found.length} functions named ${name}`);
  return found[0]!;
};
const nameOfFunction = (l: Located) => FUNCTION_NAMES.find((n) => l.id.startsWith(`${n.replace(/-/g, '')}functionFn`));

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
    for (const x of [r.DependsOn ?? []].flat()) d.add(x);
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

describe('stacks', () => {
  test(`no stack of the assembly has more than ${MAX_RESOURCES_PER_STACK} resources (each stack's count is printed)`, () => {
    const counts = stacks.map((s) => [s.path, Object.keys(s.template.Resources).length] as const);
    console.log(
      [`Resources per stack (at most ${MAX_RESOURCES_PER_STACK}; CloudFormation allows 500):`, ...counts.map(([path, n]) => `  ${path.padEnd(36)} ${String(n).padStart(4)}   room for ${MAX_RESOURCES_PER_STACK - n}`)].join('\n'),
    );
    // The areas are nested stacks: there is more than the root to count.
    expect(counts.length).toBeGreaterThan(1);
    for (const [path, n] of counts) expect([path, n <= MAX_RESOURCES_PER_STACK]).toEqual([path, true]);
  });

  test('each function is deployed in the stack of its area (lib/service/areas.ts): the root area in the root stack, every other area in a nested stack of its own', () => {
    const stackOfArea = new Map<string, StackTemplate>();
    for (const name of FUNCTION_NAMES) {
      const { stack } = functionNamed(name);
      const area = FUNCTION_AREAS[name];
      if (area === ROOT_AREA) expect([name, stack.parent]).toEqual([name, undefined]);
      else expect([name, stack.parent?.stack]).toEqual([name, root()]);
      // One stack per area, one area per stack.
      if (!stackOfArea.has(area)) stackOfArea.set(area, stack);
      expect([name, stackOfArea.get(area)!.path]).toEqual([name, stack.path]);
    }
    expect(new Set([...stackOfArea.values()].map((s) => s.path)).size).toBe(stackOfArea.size);
  });

  test('a nested stack takes from the root only what it uses: every parameter is passed by the parent and read in the template', () => {
    for (const s of stacks.filter((x) => x.parent)) {
      const parameters = Object.keys(s.template.Parameters ?? {});
      expect(parameters.length).toBeGreaterThan(0);
      const passed = s.parent!.stack.template.Resources[s.parent!.resourceId].Properties.Parameters;
      expect(Object.keys(passed).sort()).toEqual([...parameters].sort());
      const body = JSON.stringify({ Resources: s.template.Resources, Outputs: s.template.Outputs ?? {} });
      for (const p of parameters) expect([s.path, p, body.includes(JSON.stringify({ Ref: p }))]).toEqual([s.path, p, true]);
    }
  });
});

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

  test('every stack synthesized with no unacknowledged finding and no circular dependency', () => {
    expect(stacks.length).toBeGreaterThan(1);
    // CloudFormation refuses a template whose resources depend on each other in a circle; a nested
    // stack is one resource of its parent, so a circle through the areas shows in the root's template.
    for (const s of stacks) expect([s.path, dependencyCycle(s.template.Resources)]).toEqual([s.path, null]);
  });
});

/** The path of every API resource, rebuilt from PathPart and ParentId across the templates. */
function resourcePathsById(): Map<string, string> {
  const api = ofType('AWS::ApiGateway::RestApi')[0]!;
  const paths = new Map<string, string>([[`${ref(api)}.RootResourceId`, '/']]);
  const pending = ofType('AWS::ApiGateway::Resource');
  while (pending.length) {
    const before = pending.length;
    for (let i = pending.length - 1; i >= 0; i--) {
      const r = pending[i]!;
      const parent = paths.get(resolve(r, props(r).ParentId));
      if (parent === undefined) continue;
      paths.set(ref(r), `${parent === '/' ? '' : parent}/${props(r).PathPart}`);
      pending.splice(i, 1);
    }
    if (pending.length === before) throw new Error(`API resources whose parent is no resource: ${pending.map((r) => r.id).join(', ')}`);
  }
  return paths;
}

describe('API routes', () => {
  const methods = () => ofType('AWS::ApiGateway::Method');

  test('every API resource a route passes through exists exactly once across the stacks, under its parent, in this API', () => {
    const api = ref(ofType('AWS::ApiGateway::RestApi')[0]!);
    for (const r of ofType('AWS::ApiGateway::Resource')) expect(resolve(r, props(r).RestApiId)).toBe(api);
    const created = [...resourcePathsById().values()].filter((p) => p !== '/').sort();
    const expected = [...new Set(ROUTES.flatMap((r) => resourcePaths(r.path)))].sort();
    expect(created).toEqual(expected); // no path twice (API Gateway would refuse it), none missing
  });

  test('every route of the route table is deployed once, at its path, to its group\'s function, with the authorizer exactly on non-public routes', () => {
    const paths = resourcePathsById();
    const authorizer = ref(ofType('AWS::ApiGateway::Authorizer')[0]!);
    for (const route of ROUTES) {
      const found = methods().filter((m) => props(m).OperationName === route.operationId);
      expect([route.operationId, found.length]).toEqual([route.operationId, 1]);
      const m = found[0]!;
      expect([props(m).HttpMethod, paths.get(resolve(m, props(m).ResourceId))]).toEqual([route.method, route.path]);
      // A Lambda proxy integration of the function of the route's group.
      const fn = functionNamed(route.group);
      expect(props(m).Integration).toMatchObject({ Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' });
      expect(resolve(m, props(m).Integration.Uri)).toBe(`arn:aws:apigateway:${REGION}:lambda:path/2015-03-31/functions/${resolver.arnOf(fn.stack, fn.id)}/invocations`);
      if (route.auth === 'public') {
        expect(props(m).AuthorizationType).toBe('NONE');
        expect(props(m).AuthorizerId).toBeUndefined();
        expect(props(m).ApiKeyRequired ?? false).toBe(false);
      } else {
        expect(props(m).AuthorizationType).toBe('CUSTOM');
        expect(resolve(m, props(m).AuthorizerId)).toBe(authorizer);
        // The caller's usage-plan key (from the authorizer) is what per-tenant throttling counts.
        expect(props(m).ApiKeyRequired).toBe(true);
      }
    }
    expect(methods()).toHaveLength(ROUTES.length);
  });

  test("one invoke permission per function, for its methods on this API's stage only (none per method, none for console tests); the authorizer's for the authorizer", () => {
    const api = ref(ofType('AWS::ApiGateway::RestApi')[0]!);
    const permissions = ofType('AWS::Lambda::Permission');
    const groups = [...new Set(ROUTES.map((r) => r.group))];
    for (const group of groups) {
      const fn = functionNamed(group);
      const own = permissions.filter((p) => resolve(p, props(p).FunctionName) === resolver.arnOf(fn.stack, fn.id));
      expect([group, own.map((p) => [props(p).Principal, resolve(p, props(p).SourceArn)])]).toEqual([group, [['apigateway.amazonaws.com', `arn:aws:execute-api:${REGION}:${ACCOUNT}:${api}/${STAGE_NAME}/*/*`]]]);
    }
    const authorizerFn = functionNamed('authorizer');
    const authorizer = ref(ofType('AWS::ApiGateway::Authorizer')[0]!);
    const own = permissions.filter((p) => resolve(p, props(p).FunctionName) === resolver.arnOf(authorizerFn.stack, authorizerFn.id));
    expect(own.map((p) => resolve(p, props(p).SourceArn))).toEqual([`arn:aws:execute-api:${REGION}:${ACCOUNT}:${api}/authorizers/${authorizer}`]);
    expect(permissions).toHaveLength(groups.length + 1);
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

  test('a TOKEN authorizer on x-api-key with the configured cache TTL, invoking the authorizer function', () => {
    const [a] = ofType('AWS::ApiGateway::Authorizer');
    expect(props(a!)).toMatchObject({ Type: 'TOKEN', IdentitySource: 'method.request.header.x-api-key', AuthorizerResultTtlInSeconds: 30, IdentityValidationExpression: expect.any(String) });
    const fn = functionNamed('authorizer');
    expect(resolve(a!, props(a!).AuthorizerUri)).toBe(`arn:aws:apigateway:${REGION}:lambda:path/2015-03-31/functions/${resolver.arnOf(fn.stack, fn.id)}/invocations`);
  });

  test("the stage's default method limit, access logs and error logging are on; every public route has its own, lower limit", () => {
    const stage = props(ofType('AWS::ApiGateway::Stage')[0]!);
    expect(stage.StageName).toBe(STAGE_NAME);
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

  test('the stage serves a deployment made after every area\'s methods and every gateway response', () => {
    const [deployment] = ofType('AWS::ApiGateway::Deployment');
    const stage = ofType('AWS::ApiGateway::Stage')[0]!;
    expect(resolve(stage, props(stage).DeploymentId)).toBe(ref(deployment!));
    const dependsOn = new Set([deployment!.resource.DependsOn ?? []].flat());
    const mustWaitFor = [...stacks.filter((s) => s.parent).map((s) => s.parent!.resourceId), ...ofType('AWS::ApiGateway::GatewayResponse').map((g) => g.id)];
    // The root's own methods come through CDK's method dependencies.
    mustWaitFor.push(...ofType('AWS::ApiGateway::Method', [root()]).map((m) => m.id));
    for (const id of mustWaitFor) expect([id, dependsOn.has(id)]).toEqual([id, true]);
  });

  test('the API is deployed again when a route changes, and not otherwise', () => {
    const deploymentId = (routes?: readonly Route[]) => {
      const dir = mkdtempSync(join(tmpdir(), 'cdk-deploy-'));
      try {
        const { app, stack } = createServiceApp({ ...NO_BUNDLING, authorizerCacheTtlSeconds: 30, alarmEmail: 'ops@example.com' }, dir, {}, routes);
        app.synth();
        return resourcesOf(stackTemplates(stack, dir), 'AWS::ApiGateway::Deployment').map((d) => d.id);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    const current = ofType('AWS::ApiGateway::Deployment').map((d) => d.id);
    // The same routes give the same deployment (bundling or not): a deploy without route changes keeps it.
    expect(deploymentId()).toEqual(current);
    // A change to a method in an area's nested stack gives a new deployment, which the stage then serves.
    const changed = ROUTES.map((r, i) => (i === ROUTES.length - 1 ? { ...r, operationId: `${r.operationId}Renamed` } : r));
    const [next] = deploymentId(changed);
    expect(next).toBeDefined();
    expect(next).not.toBe(current[0]);
  }, 180_000);

  test('per-tenant throttling: usage plans keyed by the authorizer, the base key in its own plan', () => {
    expect(props(ofType('AWS::ApiGateway::RestApi')[0]!).ApiKeySourceType).toBe('AUTHORIZER');
    const plans = ofType('AWS::ApiGateway::UsagePlan').map(props);
    expect(plans.map((p) => [p.UsagePlanName, p.Throttle]).sort()).toEqual([
      ['CredentialService-platform', { RateLimit: API_DEFAULTS.platformThrottleRateLimit, BurstLimit: API_DEFAULTS.platformThrottleBurstLimit }],
      ['CredentialService-tenants', { RateLimit: API_DEFAULTS.tenantThrottleRateLimit, BurstLimit: API_DEFAULTS.tenantThrottleBurstLimit }],
    ]);
    expect(ofType('AWS::ApiGateway::UsagePlanKey')).toHaveLength(1); // the base key's; wallets' keys are added at run time
  });

  test("gateway-generated errors use the service error shape and keep API Gateway's status unless we mean to change it", () => {
    const responses = ofType('AWS::ApiGateway::GatewayResponse').map(props);
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

describe('per-source limits (AWS WAF on the stage)', () => {
  const webAcl = () => ofType('AWS::WAFv2::WebACL')[0]!;
  const rule = (name: string) => (props(webAcl()).Rules as Record<string, any>[]).find((r) => r.Name === name)!;
  /** The scope-down regular expressions of the public-route rule, as synthesized. */
  const publicScope = (): RegExp[] => {
    const scope = rule('per-source-public-routes').Statement.RateBasedStatement.ScopeDownStatement;
    const statements = scope.OrStatement ? scope.OrStatement.Statements : [scope];
    return statements.map((s: any) => {
      expect(s.RegexMatchStatement.FieldToMatch).toEqual({ UriPath: {} });
      return new RegExp(s.RegexMatchStatement.RegexString);
    });
  };
  /** Request paths of a route: each parameter as values clients send (a DID, an opaque reference, a dotted name). */
  const samplePaths = (path: string) =>
    ['did:web:example.com:users:alice', 'w_3Fq9XzK1', 'swagger-ui.css', '42'].map((v) => path.replace(/\{[^}]+\}/g, v));

  test('a web ACL on the stage counts each client address: every request, and tighter the public routes, over the declared window; over it, the service\'s 429', () => {
    expect(ofType('AWS::WAFv2::WebACL')).toHaveLength(1);
    expect(props(webAcl())).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const [association] = ofType('AWS::WAFv2::WebACLAssociation');
    const stage = ofType('AWS::ApiGateway::Stage')[0]!;
    expect(resolve(association!, props(association!).WebACLArn)).toBe(`${ref(webAcl())}.Arn`);
    expect(resolve(association!, props(association!).ResourceArn)).toBe(`arn:aws:apigateway:${REGION}::/restapis/${ref(ofType('AWS::ApiGateway::RestApi')[0]!)}/stages/${ref(stage)}`);
    const all = rule('per-source-all-requests');
    const pub = rule('per-source-public-routes');
    expect(all.Statement.RateBasedStatement).toEqual({ AggregateKeyType: 'IP', Limit: SOURCE_LIMITS.allRequests, EvaluationWindowSec: SOURCE_LIMITS.windowSeconds });
    expect(pub.Statement.RateBasedStatement).toMatchObject({ AggregateKeyType: 'IP', Limit: SOURCE_LIMITS.publicRequests, EvaluationWindowSec: SOURCE_LIMITS.windowSeconds });
    expect(SOURCE_LIMITS.publicRequests).toBeLessThan(SOURCE_LIMITS.allRequests);
    // Every request counts towards its source's limits before any other rule decides.
    expect(all.Priority).toBeLessThan(pub.Priority);
    expect(Math.max(all.Priority, pub.Priority)).toBeLessThan(rule('aws-common-rule-set').Priority);
    // The refusal: the status and body the local gateway answers with too.
    for (const r of [all, pub]) {
      expect(r.Action.Block.CustomResponse.ResponseCode).toBe(SOURCE_LIMITED.status);
      const body = props(webAcl()).CustomResponseBodies[r.Action.Block.CustomResponse.CustomResponseBodyKey];
      expect(body.ContentType).toBe('APPLICATION_JSON');
      expect(JSON.parse(body.Content)).toEqual({ error: SOURCE_LIMITED.error, code: SOURCE_LIMITED.code });
    }
  });

  test('the public-route rule holds every public route and no authenticated one, behind the stage prefix and on a custom domain', () => {
    const scope = publicScope();
    const matched = (path: string) => scope.some((re) => re.test(path));
    for (const route of ROUTES) {
      for (const path of samplePaths(route.path)) {
        for (const url of [`/${STAGE_NAME}${path}`, path]) expect([route.auth, url, matched(url)]).toEqual([route.auth, url, route.auth === 'public']);
      }
    }
    // Anonymous requests under a public prefix that name nothing (unknown DIDs, lists, offers) count as public too.
    const unknownUnderPublic = ROUTES.filter((r) => r.auth === 'public' && r.path.split('/').length > 2).map((r) => `${r.path.replace(/\{[^}]+\}/g, 'nobody')}`);
    for (const path of unknownUnderPublic) expect([path, matched(`/${STAGE_NAME}${path}`)]).toEqual([path, true]);
  });

  test('the public paths are derived from the route table: routes sharing a prefix are told apart, and a table whose paths cannot be is refused', () => {
    const route = (method: Route['method'], path: string, auth: Route['auth']): Route => ({ method, path, auth, group: 'meta', operationId: `${method}${path}`, summary: '', tag: '' });
    const table = [route('GET', '/x/{id}/doc', 'public'), route('GET', '/x/admin/list', 'wallet'), route('GET', '/x/{id}', 'superadmin'), route('GET', '/pub', 'public')];
    const scope = publicPathPatterns(table, 'stage').map((s) => new RegExp(s));
    const matched = (path: string) => scope.some((re) => re.test(path));
    expect(matched('/stage/x/abc/doc')).toBe(true);
    expect(matched('/x/abc/doc')).toBe(true);
    expect(matched('/pub/anything')).toBe(true);
    expect(matched('/x/admin/list')).toBe(false);
    expect(matched('/stage/x/abc')).toBe(false);
    expect(matched('/stage/xx/abc/doc')).toBe(false);
    expect(() => publicPathPatterns([route('GET', '/y/{id}', 'public'), route('GET', '/y/me', 'wallet')], 'prod')).toThrow(/cannot be told from wallet route GET \/y\/me/);
    expect(() => publicPathPatterns([route('GET', '/z', 'public'), route('PUT', '/z', 'wallet')], 'prod')).toThrow(/cannot be told from/);
  });

  test('the scope-down inspects the path as API Gateway routes it: percent-decoded, then normalized', () => {
    const statements = (() => {
      const scope = rule('per-source-public-routes').Statement.RateBasedStatement.ScopeDownStatement;
      return scope.OrStatement ? scope.OrStatement.Statements : [scope];
    })();
    for (const s of statements) {
      expect(s.RegexMatchStatement.TextTransformations).toEqual([
        { Priority: 0, Type: 'URL_DECODE' },
        { Priority: 1, Type: 'NORMALIZE_PATH' },
      ]);
    }
  });

  test("AWS's common rule set runs after the limits; the rules that would refuse legitimate requests of this API only count", () => {
    const crs = rule('aws-common-rule-set');
    expect(crs.OverrideAction).toEqual({ None: {} });
    expect(crs.Statement.ManagedRuleGroupStatement).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' });
    const overrides = crs.Statement.ManagedRuleGroupStatement.RuleActionOverrides as { Name: string; ActionToUse: unknown }[];
    expect(overrides.map((o) => o.Name).sort()).toEqual(Object.keys(COMMON_RULES_COUNTED).sort());
    for (const o of overrides) expect(o.ActionToUse).toEqual({ Count: {} });
    // Why SizeRestrictions_BODY (8 KB) counts: routes accept larger bodies.
    expect(Math.max(...ROUTES.map((r) => r.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES))).toBeGreaterThan(8 * 1024);
  });

  test('WAF logs what it blocks or counts, to a log group of this stack, never a credential header', () => {
    const [logging] = ofType('AWS::WAFv2::LoggingConfiguration');
    const p = props(logging!);
    expect(resolve(logging!, p.ResourceArn)).toBe(`${ref(webAcl())}.Arn`);
    expect(p.LoggingFilter).toEqual({
      DefaultBehavior: 'DROP',
      Filters: [{ Behavior: 'KEEP', Requirement: 'MEETS_ANY', Conditions: [{ ActionCondition: { Action: 'BLOCK' } }, { ActionCondition: { Action: 'COUNT' } }] }],
    });
    expect(p.RedactedFields.map((f: any) => f.SingleHeader.Name).sort()).toEqual(['authorization', 'dpop', 'x-api-key']);
    const [destination] = p.LogDestinationConfigs.map((d: unknown) => resolve(logging!, d));
    const groups = ofType('AWS::Logs::LogGroup').map((g) => props(g).LogGroupName).filter(Boolean);
    expect(groups.map((name: string) => `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}`)).toContain(destination);
    expect(destination).toMatch(/:log-group:aws-waf-logs-/);
  });
});

describe('data and keys', () => {
  test('one on-demand table with PITR, TTL, retain and the lookup GSI', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(1);
    const table = tables[0]!.resource;
    expect(tables[0]!.stack).toBe(root());
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

  test('the HMAC master is a KMS HMAC key, retained; every function (in every stack) names it and the table; no secret sits in any environment', () => {
    const key = ofType('AWS::KMS::Key').find((k) => props(k).KeySpec === 'HMAC_256')!;
    expect(key.resource.DeletionPolicy).toBe('Retain');
    expect(props(key)).toMatchObject({ KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' });
    const table = ofType('AWS::DynamoDB::Table')[0]!;
    // Only the configuration the service reads (lib/service/env-names.ts), nothing else.
    const known = new Set<string>([...Object.values(ENV), ...QUEUES.map((q) => queueUrlEnvName(q.id)), 'NODE_OPTIONS']);
    const keyBackendLocalOnly = [ENV.localMasterKey];
    const fns = ofType('AWS::Lambda::Function').filter((f) => props(f).Handler === 'index.handler');
    expect(fns).toHaveLength(FUNCTION_NAMES.length);
    for (const fn of fns) {
      const vars = props(fn).Environment.Variables as Record<string, unknown>;
      for (const name of Object.keys(vars)) {
        expect(known.has(name)).toBe(true);
        expect(keyBackendLocalOnly).not.toContain(name);
      }
      expect(vars.KEY_BACKEND).toBe('kms');
      expect(resolve(fn, vars.MAC_KMS_KEY_ID)).toBe(resolver.arnOf(key.stack, key.id));
      expect(resolve(fn, vars.TABLE_NAME)).toBe(ref(table));
      for (const q of QUEUES) {
        const queue = ofType('AWS::SQS::Queue', [root()]).find(({ id }) => id.startsWith(`${q.id.replace(/-/g, '')}queue`))!;
        expect(resolve(fn, vars[queueUrlEnvName(q.id)])).toBe(ref(queue));
      }
    }
  });

  test('each work queue has its DLQ with the defined receive count', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues).toHaveLength(QUEUES.length * 2 + 1); // + the relay's on-failure destination
    for (const q of QUEUES) {
      const queue = queues.find(({ id }) => id.startsWith(`${q.id.replace(/-/g, '')}queue`))!;
      expect(props(queue)).toMatchObject({ VisibilityTimeout: q.visibilityTimeoutSeconds, RedrivePolicy: { deadLetterTargetArn: expect.anything(), maxReceiveCount: q.maxReceiveCount } });
      // A FIFO queue (ordered per group, deduplicated by content) needs a FIFO DLQ.
      const dlq = queues.find(({ id }) => id.startsWith(`${q.id.replace(/-/g, '')}dlq`))!;
      expect(props(queue).FifoQueue).toBe(q.fifo);
      expect(props(queue).ContentBasedDeduplication).toBe(q.fifo);
      expect(props(dlq).FifoQueue).toBe(q.fifo);
    }
  });
});

describe('functions and IAM', () => {
  test('every function runs nodejs22.x on arm64 with its own log group', () => {
    const fns = ofType('AWS::Lambda::Function');
    expect(fns.length).toBeGreaterThanOrEqual(4);
    for (const fn of fns) {
      if (props(fn).Handler !== 'index.handler') continue; // CDK's own helpers
      expect(props(fn).Runtime).toBe('nodejs22.x');
      expect(props(fn).Architectures).toEqual(['arm64']);
      expect(props(fn).LoggingConfig).toMatchObject({ LogFormat: 'JSON', LogGroup: { Ref: expect.any(String) } });
    }
  });

  const statements = () => ofType('AWS::IAM::Policy').flatMap((p) => (props(p).PolicyDocument.Statement as Record<string, any>[]).map((s) => ({ id: p.id, ...s }) as Record<string, any>));

  test('no wildcard actions, and data actions only on the table and its index', () => {
    expect(statements().length).toBeGreaterThan(0);
    for (const s of statements()) {
      for (const action of asArray(s.Action)) expect(String(action)).not.toMatch(/\*/);
      // ListStreams is not resource-scopable (AWS); the stream reads themselves are scoped.
      if (asArray(s.Action).some((a) => String(a).startsWith('dynamodb:') && a !== 'dynamodb:ListStreams')) {
        for (const r of asArray(s.Resource)) expect(JSON.stringify(r)).not.toBe('"*"');
      }
    }
  });

  test('the only Deny statements are the tenant roles\' guards on KMS keys (test/infra/declared-access.test.ts probes them)', () => {
    const denies = statements().filter((st) => st.Effect !== 'Allow');
    expect(denies.length).toBeGreaterThan(0);
    for (const st of denies) {
      expect(st.Effect).toBe('Deny');
      for (const a of [...asArray(st.Action), ...asArray(st.NotAction)].filter((a) => a !== undefined)) expect(String(a)).toMatch(/^kms:/);
    }
  });

  test('one function per route group and worker, as lib/service/access.ts names them', () => {
    const names = ofType('AWS::Lambda::Function')
      .filter((f) => props(f).Handler === 'index.handler')
      .map((f) => f.id.replace(/functionFn.*/, ''));
    expect(names.sort()).toEqual(FUNCTION_NAMES.map((n) => n.replace(/-/g, '')).sort());
  });

  test('reserved concurrency is what RESERVED_CONCURRENCY declares, on those functions only, each with its own throttle alarm', () => {
    expect(Object.keys(RESERVED_CONCURRENCY).length).toBeGreaterThan(0);
    for (const fn of ofType('AWS::Lambda::Function').filter((f) => props(f).Handler === 'index.handler')) {
      const name = nameOfFunction(fn)!;
      expect([name, props(fn).ReservedConcurrentExecutions]).toEqual([name, RESERVED_CONCURRENCY[name]]);
    }
    const alarms = ofType('AWS::CloudWatch::Alarm');
    for (const name of Object.keys(RESERVED_CONCURRENCY) as FunctionName[]) {
      const fn = functionNamed(name);
      const own = alarms.filter((a) => props(a).MetricName === 'Throttles' && resolve(a, props(a).Dimensions[0].Value) === ref(fn));
      expect([name, own.length]).toEqual([name, 1]);
    }
  });
});

describe('bundles', () => {
  const assets = () =>
    ofType('AWS::Lambda::Function')
      .filter((fn) => props(fn).Handler === 'index.handler')
      .map((fn) => [fn.id, join(outdir, `asset.${props(fn).Code.S3Key.replace(/\.zip$/, '')}`)] as const);

  test(`every bundle's index.mjs stays within its budget: ${BUNDLE_BUDGET_BYTES} bytes, or the larger one BUNDLE_BUDGET_OVERRIDES states with its reason`, () => {
    const budgetOf = (id: string) => {
      const name = Object.keys(BUNDLE_BUDGET_OVERRIDES).find((n) => id.startsWith(`${n.replace(/-/g, '')}function`));
      return name ? BUNDLE_BUDGET_OVERRIDES[name]! : BUNDLE_BUDGET_BYTES;
    };
    expect(assets()).toHaveLength(FUNCTION_NAMES.length);
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
        banner: { js: ESM_REQUIRE_BANNER },
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
    const variables = props(functionNamed('meta')).Environment.Variables as Record<string, unknown>;
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
  const mappings = () => ofType('AWS::Lambda::EventSourceMapping');
  const mappingOf = (name: FunctionName) => {
    const fn = functionNamed(name);
    return mappings().filter((m) => m.stack === fn.stack && resolve(m, props(m).FunctionName) === ref(fn));
  };

  test('the table streams new images (the outbox)', () => {
    expect(props(ofType('AWS::DynamoDB::Table')[0]!).StreamSpecification).toEqual({ StreamViewType: TABLE.streamViewType });
  });

  test('the relay reads only new outbox items from the table stream, reports item failures, and parks what it cannot relay', () => {
    const [m] = mappingOf('webhook-relay');
    expect(props(m!)).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRecordAgeInSeconds: 86400,
      DestinationConfig: { OnFailure: { Destination: expect.anything() } },
    });
    expect(props(m!).MaximumRetryAttempts ?? -1).toBe(-1); // retried until the record's age limit, not a count
    const table = ofType('AWS::DynamoDB::Table')[0]!;
    expect(resolve(m!, props(m!).EventSourceArn)).toBe(`${resolver.arnOf(table.stack, table.id)}/stream/x`);
    const failures = ofType('AWS::SQS::Queue').find(({ id }) => id.startsWith('webhookrelayfailures'))!;
    expect(resolve(m!, props(m!).DestinationConfig.OnFailure.Destination)).toBe(resolver.arnOf(failures.stack, failures.id));
    expect(props(m!).FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual(OUTBOX_STREAM_FILTERS);
  });

  test('each queue feeds its worker with partial batch responses and the consumer settings declared beside it', () => {
    for (const q of QUEUES) {
      const [m] = mappingOf(q.worker);
      const queue = ofType('AWS::SQS::Queue', [root()]).find(({ id }) => id.startsWith(`${q.id.replace(/-/g, '')}queue`))!;
      expect(resolve(m!, props(m!).EventSourceArn)).toBe(resolver.arnOf(queue.stack, queue.id));
      expect(props(m!)).toMatchObject({ BatchSize: q.consumer.batchSize, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: q.consumer.maxConcurrency } });
      // AWS's advice: visibility timeout at least 6 x the function timeout.
      expect(q.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * props(functionNamed(q.worker)).Timeout);
    }
  });

  test('every dead-letter store has an alarm on its first message', () => {
    const dlq = ofType('AWS::CloudWatch::Alarm').map(props).filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(dlq).toHaveLength(QUEUES.length + 1);
    for (const a of dlq) expect(a).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });
});

describe('alarms reach a person', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm');
  const topic = () => ofType('AWS::SNS::Topic')[0]!;

  test('every alarm, in every stack, notifies the alarm topic when it fires and when it clears; the topic mails the configured address', () => {
    expect(ofType('AWS::SNS::Topic')).toHaveLength(1);
    expect(alarms().length).toBeGreaterThan(0);
    for (const a of alarms()) {
      expect(props(a).AlarmActions.map((x: unknown) => resolve(a, x))).toEqual([ref(topic())]);
      expect(props(a).OKActions.map((x: unknown) => resolve(a, x))).toEqual([ref(topic())]);
    }
    const subscriptions = ofType('AWS::SNS::Subscription').map(props);
    expect(subscriptions).toEqual([expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topic().id } })]);
    // CloudWatch can publish only to a topic under a key whose policy lets it.
    const keyRef = props(topic()).KmsMasterKeyId;
    const key = root().template.Resources[keyRef['Fn::GetAtt'][0]];
    expect(JSON.stringify(key.Properties.KeyPolicy)).toContain('cloudwatch.amazonaws.com');
  });

  test("the relay's iterator age, each function's errors and throttles, API 5xx and authorizer failures are watched", () => {
    const by = (name: string, ns?: string) => alarms().filter((a) => props(a).MetricName === name && (!ns || props(a).Namespace === ns));
    expect(by('IteratorAge', 'AWS/Lambda')).toHaveLength(1);
    // The authorizer's refusals are Lambda errors by design; its real failures have their own metric.
    const errors = by('Errors', 'AWS/Lambda').map((a) => resolve(a, props(a).Dimensions[0].Value));
    expect(errors.sort()).toEqual(FUNCTION_NAMES.filter((n) => n !== 'authorizer').map((n) => ref(functionNamed(n))).sort());
    // Throttles: every function exactly once, alone or in its area's sum.
    const watched: string[] = [];
    for (const a of alarms()) {
      const p = props(a);
      if (p.MetricName === 'Throttles') watched.push(resolve(a, p.Dimensions[0].Value));
      for (const m of p.Metrics ?? []) {
        if (m.MetricStat?.Metric.MetricName === 'Throttles') watched.push(resolve(a, m.MetricStat.Metric.Dimensions[0].Value));
      }
      if (p.Metrics) expect(p.Metrics.filter((m: any) => m.Expression)).toEqual([expect.objectContaining({ Expression: expect.stringMatching(/^SUM\(\[/) })]);
    }
    expect(watched.sort()).toEqual(FUNCTION_NAMES.map((n) => ref(functionNamed(n))).sort());
    expect(by('5XXError', 'AWS/ApiGateway')).toHaveLength(1);
    expect(by('AuthorizerFailures')).toHaveLength(1);
  });
});

describe('the API reference page', () => {
  test("the API reference renderer's files ship beside the meta handler, outside its code, where the handler looks for them", async () => {
    const meta = functionNamed('meta');
    const assetDir = join(outdir, `asset.${props(meta).Code.S3Key.replace(/\.zip$/, '')}`);
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
    for (const other of ofType('AWS::Lambda::Function')) {
      if (other.id === meta.id || !props(other).Code?.S3Key) continue;
      const dir = join(outdir, `asset.${props(other).Code.S3Key.replace(/\.zip$/, '')}`);
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
      const { app, stack } = createServiceApp({ ...NO_BUNDLING, customDomain: 'id.example.com', customDomainCertificateArn: arn }, outdir2, {});
      app.synth();
      const all = stackTemplates(stack, outdir2);
      const [domain] = resourcesOf(all, 'AWS::ApiGateway::DomainName');
      expect(props(domain!)).toMatchObject({ DomainName: 'id.example.com', RegionalCertificateArn: arn, SecurityPolicy: 'TLS_1_2', EndpointConfiguration: { Types: ['REGIONAL'] } });
      const mappings = resourcesOf(all, 'AWS::ApiGateway::BasePathMapping').map(props);
      expect(mappings.map((m) => m.BasePath ?? '(root)')).toEqual(['(root)']);
      // The route the 1.0 location needs is a resource of the API, reachable once the domain maps the root.
      expect(ROUTES.some((r) => r.path.startsWith('/.well-known/openid-credential-issuer/'))).toBe(true);
      const issuer = resourcesOf(all, 'AWS::Lambda::Function').find((f) => props(f).Description?.startsWith('Public OpenID4VCI'));
      expect(props(issuer!).Environment.Variables.PUBLIC_BASE_URL).toBe('https://id.example.com');
      expect(() => createServiceApp({ customDomain: 'id.example.com' }, outdir2, {})).toThrow(/go together/);
    } finally {
      rmSync(outdir2, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('the publication agreement', () => {
  test("the TAA (a real-length text from a file) ships bundled with the functions that read it only; no environment outgrows Lambda's 4 KB", () => {
    const outdir2 = mkdtempSync(join(tmpdir(), 'cdk-taa-'));
    try {
      const taa = { text: 'Publish responsibly. '.repeat(1000), version: '3', aml: { click: 'clicked' }, amlVersion: '2' };
      const file = join(outdir2, 'agreement.json');
      writeFileSync(file, JSON.stringify(taa));
      const { app, stack } = createServiceApp({ taaFile: file, indyNamespace: 'acme:test' }, outdir2);
      const assembly = app.synth();
      const fns = resourcesOf(stackTemplates(stack, assembly.directory), 'AWS::Lambda::Function');
      for (const fn of fns) {
        const vars = props(fn).Environment?.Variables ?? {};
        expect(Buffer.byteLength(JSON.stringify(vars))).toBeLessThan(4096);
        expect(Object.keys(vars).filter((k) => k.startsWith('TAA_') && k !== 'TAA_FILE')).toEqual([]);
      }
      const withTaa = fns.filter((fn) => props(fn).Environment?.Variables?.TAA_FILE);
      expect(withTaa.map((fn) => fn.id.replace(/function.*/, '')).sort()).toEqual(['dids', 'taa']);
      // In their area's nested stack.
      for (const fn of withTaa) expect(fn.stack.path).toBe(`CredentialService/${areaStackId(FUNCTION_AREAS[nameOfFunction(fn)!])}`);
      expect(props(withTaa[0]!).Environment.Variables).toMatchObject({ TAA_FILE: 'taa.json', INDY_NAMESPACE: 'acme:test' });
      // The bundled asset holds the file; the function's config loader reads it from its code root.
      const assetDir = join(assembly.directory, `asset.${props(withTaa[0]!).Code.S3Key.replace(/\.zip$/, '')}`);
      expect(JSON.parse(readFileSync(join(assetDir, 'taa.json'), 'utf8'))).toEqual(taa);
      const config = loadConfig({ KEY_BACKEND: 'local', TABLE_NAME: 't', LOCAL_MASTER_KEY: 'ab'.repeat(32), TAA_FILE: 'taa.json', LAMBDA_TASK_ROOT: assetDir });
      expect(config.taa).toEqual(taa);
      expect(() => createServiceApp({ taa: '{"text":"x"}' }, outdir2)).toThrow(/taa needs/);
    } finally {
      rmSync(outdir2, { recursive: true, force: true });
    }
  }, 180_000);
});
