import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_TAA } from '../../infra/local/runtime';
import { ALL_CONTRACTS } from '../../lib/openapi/all-contracts';
import { ROUTES, type Route } from '../../lib/service/routes';
import { packMessage, verkeyFromDidKey } from '../../lib/didcomm/envelope';
import { eventually, startReceiver, type Receiver } from '../helpers/receiver';
import { startTestApi, type TestApi } from '../helpers/runtime';
import { SpecWallet } from '../helpers/spec-wallet';
import { answerDcql } from '../helpers/spec-vp-wallet';
import { precomputedPrimesGenerator } from '../helpers/anoncreds-registry';
import { DynamoDbStore } from '../../lib/adapters/dynamodb-store';
import { parseObjectId } from '../../lib/anoncreds/identifiers';
import { RevocationRegistryStore } from '../../lib/anoncreds/revocation-registry';
import { tenantScope } from '../../lib/store/keys';

/**
 * The OpenAPI document must not lie: every route of the route table is driven over HTTP as a client
 * would, and every answer — success and error — is checked against what /openapi.json declares for that
 * operation and status, with ajv (an independent JSON Schema 2020-12 validator), $refs resolved inside
 * the served document itself.
 */

let api: TestApi;
let rx: Receiver;
let doc: any;
let ajv: Ajv2020;

const DOC_ID = 'openapi.json';
const byId = new Map(ROUTES.map((r) => [r.operationId, r]));

/** What was seen: every (operationId, status) answered, for the coverage checks at the end. */
const observed: { operationId: string; status: number }[] = [];
/** Disagreements between an answer and the document, reported after each test. */
let lies: string[] = [];

beforeAll(async () => {
  // Each public route at a low ceiling (20/s, burst 40): the throttle test below reaches it with 100 requests.
  const publicRoute = { rateLimit: 20, burstLimit: 40 };
  // AnonCreds keys from precomputed safe primes: this file checks shapes, not the maths.
  [api, rx] = await Promise.all([startTestApi({ webhookRetryDelaysSeconds: [1, 1, 1], webhookTimeoutMs: 2000, throttles: { publicRoute }, anoncredsKeyGenerator: precomputedPrimesGenerator() }), startReceiver()]);
  const res = await fetch(`${api.rt.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
  ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  // The document's top-level members are not schema keywords: schemas are reached by JSON pointer.
  ajv.addVocabulary(['openapi', 'info', 'servers', 'tags', 'components', 'paths']);
  ajv.addSchema({ ...doc, $id: DOC_ID });
});
afterAll(async () => {
  await Promise.all([api?.rt.stop(), rx?.close()]);
});
afterEach(() => {
  const found = [...new Set(lies)];
  lies = [];
  expect(found).toEqual([]);
});

// ---------------------------------------------------------------------------------------------
// Checking one answer against the document

function pointer(...segments: string[]): string {
  return `${DOC_ID}#/${segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
}

const validators = new Map<string, ValidateFunction>();
function validatorAt(ref: string): ValidateFunction {
  let v = validators.get(ref);
  if (!v) {
    v = ajv.getSchema(ref);
    if (!v) throw new Error(`no schema at ${ref}`);
    validators.set(ref, v);
  }
  return v;
}

interface MediaType {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
}

function mediaType(value: string): MediaType {
  const [type, ...params] = value.split(';');
  const entries = params
    .map((p) => p.split('=').map((s) => s.trim()))
    .filter(([k]) => k && k.toLowerCase() !== 'charset')
    .map(([k, v]) => [k!.toLowerCase(), (v ?? '').replace(/^"(.*)"$/, '$1')]);
  return { type: type!.trim().toLowerCase(), params: Object.fromEntries(entries) };
}

/** Same type and the same parameters (charset aside): a profile is part of what is declared. */
function sameMediaType(declared: string, actual: string): boolean {
  const d = mediaType(declared);
  const a = mediaType(actual);
  return d.type === a.type && JSON.stringify(Object.entries(d.params).sort()) === JSON.stringify(Object.entries(a.params).sort());
}

const isJson = (type: string) => /^application\/(?:[\w.+-]+\+)?json$/.test(mediaType(type).type);

function conformance(route: Route, status: number, contentType: string, text: string): string | null {
  const method = route.method.toLowerCase();
  const op = doc.paths?.[route.path]?.[method];
  if (!op) return 'the operation is not in the document';
  const response = op.responses?.[String(status)];
  if (!response) return `status ${status} is not declared (declared: ${Object.keys(op.responses ?? {}).join(', ')})`;
  const declared = Object.keys(response.content ?? {});
  // A response declared without content must come without a body (204 No Content).
  if (declared.length === 0) return text === '' && contentType === '' ? null : `${status} declared without content, answered ${JSON.stringify(contentType)} ${text.slice(0, 100)}`;
  const key = declared.find((k) => sameMediaType(k, contentType));
  if (!key) return `${status} answered ${JSON.stringify(contentType)}, declared: ${declared.join(', ') || 'no content'}`;
  let value: unknown = text;
  if (isJson(key)) {
    try {
      value = JSON.parse(text);
    } catch {
      return `${status} ${key}: the body is not JSON`;
    }
  }
  let validate: ValidateFunction;
  try {
    validate = validatorAt(pointer('paths', route.path, method, 'responses', String(status), 'content', key, 'schema'));
  } catch (err) {
    return `${status} ${key}: the declared schema does not compile: ${(err as Error).message}`;
  }
  if (!validate(value)) return `${status} ${key}: ${ajv.errorsText(validate.errors, { separator: '; ' })}; body: ${text.slice(0, 400)}`;
  return null;
}

interface HitOptions {
  readonly key?: string | null;
  readonly body?: unknown;
  readonly rawBody?: string;
  readonly headers?: Record<string, string>;
}

interface Hit {
  readonly status: number;
  readonly body: any;
  readonly text: string;
  readonly headers: Headers;
}

function matchesTemplate(route: Route, path: string): boolean {
  const pathname = path.split('?')[0]!;
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${source}$`).test(pathname);
}

/** One request to an operation; the answer is checked against the document and must have one of `expected`. */
async function hit(operationId: string, path: string, expected: number | readonly number[], opts: HitOptions = {}): Promise<Hit> {
  const route = byId.get(operationId);
  if (!route) throw new Error(`no route ${operationId}`);
  if (!matchesTemplate(route, path)) throw new Error(`${path} is not ${route.path} (${operationId})`);
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers['x-api-key'] = opts.key;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${api.rt.url}${path}`, { method: route.method, headers, body });
  const text = await res.text();
  observed.push({ operationId, status: res.status });
  const lie = conformance(route, res.status, res.headers.get('content-type') ?? '', text);
  if (lie) lies.push(`${operationId} (${route.method} ${path.slice(0, 120)}): ${lie}`);
  const wanted = [expected].flat();
  if (!wanted.includes(res.status)) throw new Error(`${operationId} ${route.method} ${path}: expected ${wanted.join(' or ')}, got ${res.status} ${text.slice(0, 300)}`);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

let walletCounter = 0;
async function newWallet(label?: string) {
  const name = `schema-${process.pid}-${++walletCounter}`;
  const w = await hit('createSubwallet', '/api/subwallet/create', 200, { key: api.baseKey, body: label ? { wallet_name: name, label } : { wallet_name: name } });
  const k = await hit('createApiKey', '/api/apikey/create', 200, { key: api.baseKey, body: { wallet_id: String(w.body.wallet_id), roles: ['admin'] } });
  return { walletId: w.body.wallet_id as number, token: w.body.token as string, apiKey: k.body.api_key as string, keyId: k.body.key_id as string, name };
}

const UNKNOWN_DELIVERY = 'dlv_01KAAAAAAAAAAAAAAAAAAAAAAA_0123abcd';
const A_DID_KEY = 'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp';

// ---------------------------------------------------------------------------------------------
// Scenarios

describe('tenancy', () => {
  test('subwallets', async () => {
    const created = await hit('createSubwallet', '/api/subwallet/create', 200, { key: api.baseKey, body: { wallet_name: 'schema-acme', label: 'Acme' } });
    await hit('createSubwallet', '/api/subwallet/create', 409, { key: api.baseKey, body: { wallet_name: 'schema-acme' } });
    await hit('createSubwallet', '/api/subwallet/create', 400, { key: api.baseKey, body: { label: 'no name' } });
    await hit('createSubwallet', '/api/subwallet/create', 400, { key: api.baseKey, rawBody: '{"wallet_name": ' });
    await hit('createSubwallet', '/api/subwallet/create', 413, { key: api.baseKey, body: { wallet_name: 'x'.repeat(70 * 1024) } });
    await hit('listSubwallets', '/api/subwallets', 200, { key: api.baseKey });
    await hit('getSubwallet', `/api/subwallets/${created.body.wallet_id}`, 200, { key: api.baseKey });
    await hit('getSubwallet', '/api/subwallets/999999', 404, { key: api.baseKey });
    await hit('getSubwallet', '/api/subwallets/abc', 400, { key: api.baseKey });
  });

  test('API keys, as the super-admin and as the wallet', async () => {
    const w = await newWallet('Keys');
    const expiresAt = new Date(Date.now() + 86400_000).toISOString();
    const named = await hit('createApiKey', '/api/apikey/create', 200, {
      key: api.baseKey,
      body: { wallet_id: w.walletId, roles: ['admin'], name: 'ci', expires_at: expiresAt },
    });
    await hit('createApiKey', '/api/apikey/create', 200, { key: api.baseKey, body: { wallet_id: w.walletId, roles: ['admin'], name: 'forever', expires_at: null } });
    await hit('createApiKey', '/api/apikey/create', 409, { key: api.baseKey, body: { wallet_id: w.walletId, roles: ['admin'], name: 'ci' } });
    await hit('createApiKey', '/api/apikey/create', 404, { key: api.baseKey, body: { wallet_id: '987654', roles: ['admin'] } });
    await hit('createApiKey', '/api/apikey/create', 400, { key: api.baseKey, body: { wallet_id: w.walletId, roles: ['root'] } });
    await hit('createApiKey', '/api/apikey/create', 400, {
      key: api.baseKey,
      body: { wallet_id: w.walletId, roles: ['admin'], expires_at: '2001-01-01T00:00:00Z' },
    });

    await hit('getOwnWallet', '/api/v1/wallet', 200, { key: w.apiKey });
    await hit('getOwnWallet', '/api/v1/wallet', 200, { key: w.token });
    await hit('listOwnApiKeys', '/api/v1/apikeys', 200, { key: w.apiKey });
    await hit('getOwnApiKey', `/api/v1/apikeys/${named.body.key_id}`, 200, { key: w.apiKey });
    await hit('getOwnApiKey', '/api/v1/apikeys/no-such-key', 404, { key: w.apiKey });
    await hit('getOwnApiKey', `/api/v1/apikeys/${'k'.repeat(65)}`, 400, { key: w.apiKey });

    // A wallet revokes its own leaked key; the revoked key is refused, and still listed as revoked.
    await hit('revokeOwnApiKey', `/api/v1/apikeys/${named.body.key_id}/revoke`, 200, { key: w.apiKey });
    await hit('revokeOwnApiKey', `/api/v1/apikeys/${named.body.key_id}/revoke`, 200, { key: w.apiKey });
    await hit('revokeOwnApiKey', '/api/v1/apikeys/no-such-key/revoke', 404, { key: w.apiKey });
    await hit('revokeOwnApiKey', `/api/v1/apikeys/${'k'.repeat(65)}/revoke`, 400, { key: w.apiKey });
    await hit('getOwnWallet', '/api/v1/wallet', 401, { key: named.body.api_key });
    await hit('listOwnApiKeys', '/api/v1/apikeys', 200, { key: w.apiKey });

    // The super-admin revokes by key_id (kept, revoked) and by name (deleted).
    const other = await hit('createApiKey', '/api/apikey/create', 200, { key: api.baseKey, body: { wallet_id: String(w.walletId), roles: ['admin'], name: 'temp' } });
    await hit('revokeApiKey', '/api/apikey/revoke', 200, { key: api.baseKey, body: { wallet_id: String(w.walletId), key_id: w.keyId } });
    await hit('revokeApiKey', '/api/apikey/revoke', 200, { key: api.baseKey, body: { wallet_id: w.walletId, name: 'temp' } });
    await hit('revokeApiKey', '/api/apikey/revoke', 404, { key: api.baseKey, body: { wallet_id: w.walletId, name: 'temp' } });
    await hit('revokeApiKey', '/api/apikey/revoke', 404, { key: api.baseKey, body: { wallet_id: w.walletId, key_id: 'no-such-key' } });
    await hit('revokeApiKey', '/api/apikey/revoke', 400, { key: api.baseKey, body: { wallet_id: w.walletId, name: 'x', key_id: 'y' } });
    await hit('getOwnWallet', '/api/v1/wallet', 401, { key: other.body.api_key });
    await hit('getOwnApiKey', `/api/v1/apikeys/${w.keyId}`, 200, { key: w.token });

    // An expired key: 401.
    // 3 s ahead, so that a slow create is not refused as already past; then wait for the expiry itself.
    const shortExpiry = Date.now() + 3000;
    const short = await hit('createApiKey', '/api/apikey/create', 200, {
      key: api.baseKey,
      body: { wallet_id: w.walletId, roles: ['admin'], expires_at: new Date(shortExpiry).toISOString() },
    });
    await new Promise((r) => setTimeout(r, shortExpiry - Date.now() + 200));
    await hit('listOwnApiKeys', '/api/v1/apikeys', 401, { key: short.body.api_key });
    await hit('listOwnApiKeys', '/api/v1/apikeys', 200, { key: w.token });
  });
});

describe('webhooks', () => {
  async function settled(key: string, eventId: string, url: string) {
    return eventually(
      async () => {
        const list = await hit('listWebhookDeliveries', `/api/v1/webhook-deliveries?event_id=${eventId}`, 200, { key });
        const d = (list.body as any[]).find((x) => x.url === url);
        return d && !['pending', 'retrying'].includes(d.status) ? d : undefined;
      },
      20000,
      `delivery of ${eventId} to ${url}`,
    );
  }

  test('targets, ping, deliveries and their attempts, redelivery', async () => {
    const w = await newWallet();
    const ok = `${rx.url}/schema-ok`;
    const gone = `${rx.url}/schema-gone`;
    const closed = 'http://127.0.0.1:1/closed';
    rx.on('/schema-gone', 410);

    await hit('getWebhookTargetUrls', '/api/v1/settings/webhook-target-urls', 200, { key: w.apiKey });
    await hit('pingWebhookTargets', '/api/v1/settings/webhook-target-urls/ping', 409, { key: w.apiKey });
    await hit('putWebhookTargetUrls', '/api/v1/settings/webhook-target-urls', 400, { key: w.apiKey, body: { urls: ['ftp://example.com/in'] } });
    await hit('putWebhookTargetUrls', '/api/v1/settings/webhook-target-urls', 400, { key: w.apiKey, rawBody: '{"urls": [' });
    await hit('putWebhookTargetUrls', '/api/v1/settings/webhook-target-urls', 413, { key: w.apiKey, body: { urls: ['x'.repeat(70 * 1024)] } });
    await hit('putWebhookTargetUrls', '/api/v1/settings/webhook-target-urls', 200, { key: w.apiKey, body: { urls: [ok, gone, closed] } });
    await hit('getWebhookTargetUrls', '/api/v1/settings/webhook-target-urls', 200, { key: w.apiKey });
    await hit('listWebhookTargets', '/api/v1/settings/webhook-targets', 200, { key: w.apiKey });

    const event = (await hit('pingWebhookTargets', '/api/v1/settings/webhook-target-urls/ping', 202, { key: w.apiKey })).body.event;
    // While the closed port's delivery is retrying it has a next attempt time.
    await eventually(async () => {
      const list = await hit('listWebhookDeliveries', `/api/v1/webhook-deliveries?event_id=${event.id}`, 200, { key: w.apiKey });
      return (list.body as any[]).some((d) => d.url === closed && d.status === 'retrying') ? true : undefined;
    });
    const delivered = await settled(w.apiKey, event.id, ok);
    const refused = await settled(w.apiKey, event.id, gone);
    const failed = await settled(w.apiKey, event.id, closed);
    expect([delivered.status, refused.status, failed.status]).toEqual(['delivered', 'failed', 'failed']);
    await hit('listWebhookTargets', '/api/v1/settings/webhook-targets', 200, { key: w.apiKey });

    await hit('listWebhookDeliveries', '/api/v1/webhook-deliveries', 200, { key: w.apiKey });
    await hit('listWebhookDeliveries', '/api/v1/webhook-deliveries?limit=1&status=failed', 200, { key: w.apiKey });
    await hit('listWebhookDeliveries', '/api/v1/webhook-deliveries?limit=0', 400, { key: w.apiKey });
    await hit('listWebhookDeliveries', '/api/v1/webhook-deliveries?status=nope', 400, { key: w.apiKey });
    for (const d of [delivered, refused, failed]) await hit('getWebhookDelivery', `/api/v1/webhook-deliveries/${d.delivery_id}`, 200, { key: w.apiKey });
    await hit('getWebhookDelivery', `/api/v1/webhook-deliveries/${UNKNOWN_DELIVERY}`, 404, { key: w.apiKey });
    await hit('getWebhookDelivery', '/api/v1/webhook-deliveries/nope', 400, { key: w.apiKey });

    const again = await hit('redeliverWebhook', `/api/v1/webhook-deliveries/${delivered.delivery_id}/redeliver`, 202, { key: w.apiKey });
    await hit('redeliverWebhook', `/api/v1/webhook-deliveries/${refused.delivery_id}/redeliver`, 409, { key: w.apiKey }); // its target is disabled
    await hit('redeliverWebhook', `/api/v1/webhook-deliveries/${UNKNOWN_DELIVERY}/redeliver`, 404, { key: w.apiKey });
    await hit('redeliverWebhook', '/api/v1/webhook-deliveries/nope/redeliver', 400, { key: w.apiKey });
    const redelivered = await settled(w.apiKey, event.id, ok);
    await hit('getWebhookDelivery', `/api/v1/webhook-deliveries/${again.body.delivery_id}`, 200, { key: w.apiKey });
    expect(redelivered.status).toBe('delivered');

    await hit('putWebhookTargetUrls', '/api/v1/settings/webhook-target-urls', 200, { key: w.apiKey, body: {} });
  });

  test('signing secret and its rotation', async () => {
    const w = await newWallet();
    await hit('getWebhookSecret', '/api/v1/settings/webhook-secret', 200, { key: w.apiKey });
    await hit('rotateWebhookSecret', '/api/v1/settings/webhook-secret/rotate', 200, { key: w.apiKey, body: { grace_period_seconds: 3600 } });
    await hit('getWebhookSecret', '/api/v1/settings/webhook-secret', 200, { key: w.apiKey });
    await hit('rotateWebhookSecret', '/api/v1/settings/webhook-secret/rotate', 200, { key: w.apiKey });
    await hit('rotateWebhookSecret', '/api/v1/settings/webhook-secret/rotate', 200, { key: w.apiKey, body: { grace_period_seconds: 0 } });
    await hit('rotateWebhookSecret', '/api/v1/settings/webhook-secret/rotate', 400, { key: w.apiKey, body: { grace_period_seconds: -1 } });
    await hit('rotateWebhookSecret', '/api/v1/settings/webhook-secret/rotate', 400, { key: w.apiKey, rawBody: 'not json' });
  });
});

describe('DIDs, the TAA and resolution', () => {
  test('create, list, read, publish, resolve, deactivate', async () => {
    const w = await newWallet();
    const key = w.apiKey;
    const sov = (await hit('createDid', '/api/v1/create-did', 200, { key })).body.did;
    await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'key', options: { key_type: 'p256' } } });
    await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'jwk' } });
    const web = (await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'web', options: { key_type: 'p256' } } })).body.did;
    const web2 = (await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'web' } })).body.did;
    await hit('createDid', '/api/v1/create-did', 400, { key, body: { method: 'sov', options: { key_type: 'p256' } } });
    await hit('createDid', '/api/v1/create-did', 400, { key, body: { method: 'ethr' } });
    await hit('createIndyDid', '/api/v1/did/indy', 200, { key });
    await hit('createIndyDid', '/api/v1/did/indy', 400, { key, body: { seed: '000000000000000000000000Steward1' } });

    await hit('listDids', '/api/v1/dids', 200, { key });
    await hit('listDids', '/api/v1/dids?method=web', 200, { key });
    await hit('listDids', '/api/v1/dids?method=ethr', 400, { key });
    await hit('getDid', `/api/v1/dids/${sov.did}`, 200, { key });
    await hit('getDid', `/api/v1/dids/${encodeURIComponent(web.did)}`, 200, { key });
    await hit('getDid', '/api/v1/dids/did:sov:NotARealDidAtAll12345', 404, { key });
    await hit('getDid', '/api/v1/dids/nope', 400, { key });
    await hit('getPublicDid', '/api/v1/public-did', 200, { key });

    // Publishing needs the agreement accepted.
    await hit('setPublicDid', `/api/v1/set-public-did?DID=${sov.did}`, 409, { key });
    await hit('setPublicDid', '/api/v1/set-public-did', 400, { key });
    await hit('setPublicDid', '/api/v1/set-public-did?DID=did:sov:NotARealDidAtAll12345', 404, { key });
    const taa = (await hit('fetchTaa', '/api/v1/fetch-taa', 200, { key })).body.taa;
    await hit('acceptTaa', '/api/v1/accept-taa', 400, { key, body: { mechanism: 'telepathy' } });
    await hit('acceptTaa', '/api/v1/accept-taa', 400, { key, body: { mechanism: 'on_file', version: '0.9' } });
    await hit('acceptTaa', '/api/v1/accept-taa', 400, { key, body: {} });
    const mechanism = Object.keys(taa.aml_record.aml)[0]!;
    await hit('acceptTaa', '/api/v1/accept-taa', 200, { key, body: { mechanism, text: taa.taa_record.text, version: taa.taa_record.version } });
    expect(taa.taa_record.version).toBe(LOCAL_TAA.version);
    await hit('fetchTaa', '/api/v1/fetch-taa', 200, { key });

    await hit('setPublicDid', `/api/v1/set-public-did?DID=${sov.did}`, 200, { key });
    await hit('setPublicDid', `/api/v1/set-public-did?DID=${sov.did}`, 200, { key });
    await hit('getPublicDid', '/api/v1/public-did', 200, { key });

    // Resolution, in every representation the resolver negotiates.
    const sovPath = `/1.0/identifiers/did:sov:${sov.did}`;
    await hit('resolveDid', sovPath, 200);
    await hit('resolveDid', `/1.0/identifiers/${sov.did}`, 200, { headers: { accept: 'application/json' } });
    await hit('resolveDid', sovPath, 200, { headers: { accept: 'application/ld+json;profile="https://w3id.org/did-resolution"' } });
    await hit('resolveDid', sovPath, 200, { headers: { accept: 'application/did+json' } });
    await hit('resolveDid', sovPath, 200, { headers: { accept: 'application/did+ld+json, application/json;q=0.5' } });
    await hit('resolveDid', `/1.0/identifiers/${A_DID_KEY}`, 200);
    await hit('resolveDid', '/1.0/identifiers/did:sov:NotARealDidAtAll12345', 404);
    await hit('resolveDid', '/1.0/identifiers/did:sov:NotARealDidAtAll12345', 404, { headers: { accept: 'application/did+json' } });
    await hit('resolveDid', '/1.0/identifiers/not-a-did', 400);
    await hit('resolveDid', `/1.0/identifiers/did:x:${'a'.repeat(8200)}`, 400);
    await hit('resolveDid', '/1.0/identifiers/did:key:%E0%A4%A', 400);

    // did:web: served at its own path once public.
    const webId = (d: { did: string }) => d.did.split(':').pop()!;
    await hit('getDidWebDocument', `/dids/${webId(web)}/did.json`, 404);
    await hit('setPublicDid', `/api/v1/set-public-did?DID=${encodeURIComponent(web.did)}`, 200, { key });
    await hit('getDidWebDocument', `/dids/${webId(web)}/did.json`, 200);
    await hit('getDidWebDocument', '/dids/0OIl/did.json', 400);

    // Deactivation: not the public DID; a posted (earlier public) one resolves as gone afterwards.
    await hit('deactivateDid', `/api/v1/dids/${encodeURIComponent(web.did)}/deactivate`, 409, { key });
    await hit('deactivateDid', '/api/v1/dids/did:sov:NotARealDidAtAll12345/deactivate', 404, { key });
    await hit('deactivateDid', '/api/v1/dids/nope/deactivate', 400, { key });
    await hit('deactivateDid', `/api/v1/dids/${sov.did}/deactivate`, 200, { key });
    await hit('deactivateDid', `/api/v1/dids/${sov.did}/deactivate`, 200, { key });
    await hit('getDid', `/api/v1/dids/${sov.did}`, 200, { key });
    await hit('setPublicDid', `/api/v1/set-public-did?DID=${sov.did}`, 409, { key });
    await hit('resolveDid', sovPath, 410);
    await hit('resolveDid', sovPath, 410, { headers: { accept: 'application/did+json' } });
    await hit('setPublicDid', `/api/v1/set-public-did?DID=${encodeURIComponent(web2.did)}`, 200, { key });
    await hit('deactivateDid', `/api/v1/dids/${encodeURIComponent(web.did)}/deactivate`, 200, { key });
    await hit('getDidWebDocument', `/dids/${webId(web)}/did.json`, 410);
    await hit('listDids', '/api/v1/dids', 200, { key });
  });

  test('DID creation is rate limited per wallet', async () => {
    const w = await newWallet();
    let status = 200;
    // 10 a minute: more tries than that in case the loop crosses a minute boundary.
    for (let i = 0; i < 25 && status === 200; i++) {
      const op = i % 2 ? 'createIndyDid' : 'createDid';
      status = (await hit(op, op === 'createDid' ? '/api/v1/create-did' : '/api/v1/did/indy', [200, 429], { key: w.apiKey })).status;
    }
    expect(status).toBe(429);
  });
});

describe('OID4VCI admin', () => {
  test('supported credentials, offers and exchanges', async () => {
    const w = await newWallet();
    const key = w.apiKey;
    const S = '/api/v1/oid4vci/credentials-supported';
    const claims = { given_name: { mandatory: true, value_type: 'string', display: [{ name: 'Given name', locale: 'en' }] }, address: { city: { value_type: 'string' } } };
    const sd = (
      await hit('createSdJwtSupportedCredential', `${S}/sd-jwt`, 200, {
        key,
        body: { id: 'Pid', vct: 'urn:pid', claims, sd_list: ['/given_name', '/address/city'], display: [{ name: 'PID', logo: { url: 'https://example.com/l.png', alt_text: 'l' } }] },
      })
    ).body;
    await hit('createSdJwtSupportedCredential', `${S}/sd-jwt`, 409, { key, body: { id: 'Pid', vct: 'urn:pid', claims } });
    await hit('createSdJwtSupportedCredential', `${S}/sd-jwt`, 400, { key, body: { id: 'Pid2', vct: 'urn:pid', claims, sd_list: ['/cnf/jwk'] } });
    await hit('createSdJwtSupportedCredential', `${S}/sd-jwt`, 413, { key, body: { id: 'Big', vct: 'x'.repeat(70 * 1024), claims } });
    const jwtBody = { id: 'Degree', type: ['VerifiableCredential', 'Degree'], '@context': ['https://www.w3.org/2018/credentials/v1'], credentialSubject: { degree: {} } };
    const jwt = (await hit('createJwtSupportedCredential', `${S}/jwt`, 200, { key, body: jwtBody })).body;
    await hit('createJwtSupportedCredential', `${S}/jwt`, 400, { key, body: { ...jwtBody, id: 'Degree2', type: ['Degree'] } });
    await hit('createJwtSupportedCredential', `${S}/jwt`, 409, { key, body: jwtBody });
    await hit('createSupportedCredential', S, 200, { key, body: { format: 'dc+sd-jwt', id: 'Generic', format_data: { vct: 'urn:g', claims: {}, display: [{ name: 'G' }] } } });
    await hit('createSupportedCredential', S, 400, { key, body: { format: 'ldp_vc', id: 'x' } });
    await hit('createSupportedCredential', S, 409, { key, body: { format: 'dc+sd-jwt', id: 'Generic', format_data: { vct: 'urn:g', claims: {} } } });

    await hit('listSupportedCredentials', S, 200, { key });
    await hit('listSupportedCredentials', `${S}?format=jwt_vc_json&limit=1`, 200, { key });
    await hit('listSupportedCredentials', `${S}?format=mdoc`, 400, { key });
    await hit('getSupportedCredential', `${S}/${sd.supported_cred_id}`, 200, { key });
    await hit('getSupportedCredential', `${S}/no-such-record`, 404, { key });

    // The issuer: a DID of this wallet (no public one yet: 400 without `did`).
    const did = (await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'key' } })).body.did.did;
    const issue = (body: object, status: number) => hit('issueCredentialOffer', '/api/v1/oid4vci/issue', status, { key, body });
    await issue({ supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E' } }, 400);
    const offered = (await issue({ supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E', address: { city: 'K' } }, did, pin: '1234' }, 200)).body;
    await issue({ supported_cred_id: jwt.supported_cred_id, credential_subject: { degree: 'BSc' }, did, expires_in: 3600 }, 200);
    await issue({ supported_cred_id: sd.supported_cred_id, credential_subject: { nick: 'E' }, did }, 400);
    await issue({ supported_cred_id: 'no-such-record', did }, 404);
    await issue({ credential_subject: {} }, 400);

    const id = offered.exchange.exchange_id;
    await hit('listExchanges', '/api/v1/oid4vci/exchanges', 200, { key });
    await hit('listExchanges', `/api/v1/oid4vci/exchanges?state=offer&supported_cred_id=${sd.supported_cred_id}&limit=1`, 200, { key });
    await hit('listExchanges', '/api/v1/oid4vci/exchanges?state=nope', 400, { key });
    await hit('getExchange', `/api/v1/oid4vci/exchanges/${id}`, 200, { key });
    await hit('getExchange', '/api/v1/oid4vci/exchanges/no-such-exchange', 404, { key });
    await hit('deleteExchange', `/api/v1/oid4vci/exchanges/${id}`, 200, { key });
    await hit('deleteExchange', `/api/v1/oid4vci/exchanges/${id}`, 404, { key });
    await hit('deleteSupportedCredential', `${S}/${sd.supported_cred_id}`, 200, { key });
    await hit('deleteSupportedCredential', `${S}/${sd.supported_cred_id}`, 404, { key });
  });
});

describe('OID4VCI issuer (public protocol endpoints)', () => {
  test('metadata, offer by reference, token, nonce, credential and notification, and their protocol errors', async () => {
    const w = await newWallet('Issuer Ltd');
    const key = w.apiKey;
    const sd = (await hit('createSdJwtSupportedCredential', '/api/v1/oid4vci/credentials-supported/sd-jwt', 200, { key, body: { id: 'Pid', vct: 'urn:pid', claims: { given_name: { mandatory: true, value_type: 'string' } }, sd_list: ['/given_name'] } })).body;
    const did = (await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'key' } })).body.did.did;
    const offered = (await hit('issueCredentialOffer', '/api/v1/oid4vci/issue', 200, { key, body: { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E' }, did } })).body;
    // The issuer as the offer names it: `/oid4vci/<public_ref>`. Its sequential id names nothing public.
    const I = new URL(offered.offer.credential_issuer).pathname;
    await hit('getCredentialIssuerMetadata', `/.well-known/openid-credential-issuer${I}`, 200);
    await hit('getCredentialIssuerMetadata', `/.well-known/openid-credential-issuer/oid4vci/${w.walletId}`, 404);
    await hit('getCredentialIssuerMetadataAppended', `${I}/.well-known/openid-credential-issuer`, 200);
    await hit('getCredentialIssuerMetadataAppended', '/oid4vci/AAAAAAAAAAAAAAAAAAAAAA/.well-known/openid-credential-issuer', 404);
    await hit('getAuthorizationServerMetadata', `/.well-known/oauth-authorization-server${I}`, 200);
    await hit('getAuthorizationServerMetadata', '/.well-known/oauth-authorization-server/oid4vci/999999', 404);
    await hit('getAuthorizationServerMetadataAppended', `${I}/.well-known/oauth-authorization-server`, 200);
    await hit('getAuthorizationServerMetadataAppended', '/oid4vci/x/.well-known/oauth-authorization-server', 404);
    const ref = decodeURIComponent(offered.credential_offer_uri.split('credential_offer_uri=')[1]).split('/offers/')[1];
    await hit('getCredentialOffer', `${I}/offers/${ref}`, 200);
    await hit('getCredentialOffer', `${I}/offers/${'A'.repeat(43)}`, 404);
    const form = (fields: Record<string, string>) => ({ rawBody: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const code = offered.offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'];
    await hit('token', `${I}/token`, 400, form({ grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code', 'pre-authorized_code': 'nope' }));
    const token = (await hit('token', `${I}/token`, 200, form({ grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code', 'pre-authorized_code': code }))).body;
    await hit('nonce', `${I}/nonce`, 200);
    await hit('nonce', `/oid4vci/${w.walletId}/nonce`, 404);
    const auth = { authorization: `Bearer ${token.access_token}` };
    await hit('credential', `${I}/credential`, 401, { body: { credential_configuration_id: 'Pid' } });
    await hit('credential', `${I}/credential`, 400, { headers: auth, body: { credential_configuration_id: 'Pid', proofs: { jwt: ['not-a-jwt'] } } });
    const wallet = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
    const proof = wallet.makeProof({ aud: `${api.rt.url}${I}`, nonce: token.c_nonce });
    const issued = (await hit('credential', `${I}/credential`, 200, { headers: auth, body: { credential_configuration_id: 'Pid', proofs: { jwt: [proof] } } })).body;
    await hit('notification', `${I}/notification`, 400, { headers: auth, body: { notification_id: 'other', event: 'credential_accepted' } });
    await hit('notification', `${I}/notification`, 204, { headers: auth, body: { notification_id: issued.notification_id, event: 'credential_accepted' } });
  });
});

describe('status lists', () => {
  test('definitions, entries, revocation, publication and the public lists (with 304)', async () => {
    const w = await newWallet();
    const key = w.apiKey;
    const D = '/api/v1/status-list/defs';
    await hit('createStatusListDef', D, 400, { key, body: {} }); // no public DID yet, none given
    const did = (await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'key' } })).body.did.did;
    const sd = (await hit('createSdJwtSupportedCredential', '/api/v1/oid4vci/credentials-supported/sd-jwt', 200, { key, body: { id: 'Pid', vct: 'urn:pid', claims: { given_name: {} } } })).body;
    const def = (await hit('createStatusListDef', D, 200, { key, body: { supported_cred_id: sd.supported_cred_id, issuer_did: did } })).body;
    await hit('createStatusListDef', D, 409, { key, body: { supported_cred_id: sd.supported_cred_id, issuer_did: did } });
    await hit('createStatusListDef', D, 400, { key, body: { list_size: 1000, issuer_did: did } });
    const spare = (await hit('createStatusListDef', D, 200, { key, body: { status_purpose: 'message', status_size: 2, status_message: ['0x0', '0x1', '0x2', '0x3'].map((status) => ({ status, message: status })), issuer_did: did } })).body;
    await hit('listStatusListDefs', D, 200, { key });
    await hit('listStatusListDefs', `${D}?status_purpose=revocation&limit=1`, 200, { key });
    await hit('listStatusListDefs', `${D}?status_purpose=expiry`, 400, { key });
    await hit('getStatusListDef', `${D}/${def.id}`, 200, { key });
    await hit('getStatusListDef', `${D}/00000000-0000-4000-8000-000000000000`, 404, { key });
    await hit('getStatusListDef', `${D}/not-a-uuid`, 400, { key });

    const offered = (await hit('issueCredentialOffer', '/api/v1/oid4vci/issue', 200, { key, body: { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E' }, did } })).body;
    const cx = offered.exchange.exchange_id;
    await hit('getStatusListEntry', `/api/v1/status-list/entries/${cx}`, 404, { key }); // not issued yet
    await new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }).receive(offered.credential_offer_uri);
    await hit('getStatusListEntry', `/api/v1/status-list/entries/${cx}`, 200, { key });
    await hit('getStatusListEntry', '/api/v1/status-list/entries/no-such-exchange', 404, { key });
    await hit('revokeStatusListEntry', `/api/v1/status-list/entries/revoke/${cx}`, 400, { key, body: { status: '10' } });
    await hit('revokeStatusListEntry', `/api/v1/status-list/entries/revoke/${cx}`, 200, { key });
    await hit('revokeStatusListEntry', `/api/v1/status-list/entries/revoke/no-such-exchange`, 404, { key });

    await hit('publishStatusListDef', `${D}/${def.id}/publish`, 200, { key });
    await hit('publishStatusListDef', `${D}/${spare.id}/publish`, 400, { key, body: { status_type: 'ietf' } });
    await hit('publishStatusListDef', `${D}/00000000-0000-4000-8000-000000000000/publish`, 404, { key });
    // The list as the definition names it: `/status-lists/<public_ref>/<def>/0/ietf`.
    const L = new URL((await hit('getStatusListDef', `${D}/${def.id}`, 200, { key })).body[0].status_lists[0]).pathname.replace(/\/ietf$/, '');
    const ietf = await hit('getIetfStatusList', `${L}/ietf`, 200);
    await hit('getIetfStatusList', `${L}/ietf`, 304, { headers: { 'if-none-match': ietf.headers.get('etag')! } });
    await hit('getIetfStatusList', `${L.replace(/\/0$/, '')}/9/ietf`, 404);
    await hit('getIetfStatusList', `${L.replace(/\/0$/, '')}/x/ietf`, 400);
    await hit('getIetfStatusList', `/status-lists/${w.walletId}/${def.id}/0/ietf`, 404);
    await hit('getIetfStatusList', `${L}/ietf?time=1700000000`, 501);
    const w3c = await hit('getW3cStatusList', `${L}/w3c`, 200);
    await hit('getW3cStatusList', `${L}/w3c`, 304, { headers: { 'if-none-match': w3c.headers.get('etag')! } });
    await hit('getW3cStatusList', `/status-lists/${w.walletId}/${def.id}/0/w3c`, 404);

    await hit('deleteStatusListDef', `${D}/${def.id}`, 409, { key });
    await hit('deleteStatusListDef', `${D}/${def.id}`, 200, { key, body: { recursive_delete: true } });
    await hit('deleteStatusListDef', `${D}/${def.id}`, 404, { key });
    await hit('deleteStatusListDef', `${D}/${spare.id}`, 200, { key });
  });
});

describe('OID4VP', () => {
  test('definitions, requests, presentations, the request object and the response endpoint', async () => {
    const w = await newWallet();
    const key = w.apiKey;
    const did = (await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'key' } })).body.did.did;
    const sd = (await hit('createSdJwtSupportedCredential', '/api/v1/oid4vci/credentials-supported/sd-jwt', 200, { key, body: { id: 'Pid', format: 'dc+sd-jwt', vct: 'urn:pid', claims: { given_name: {} }, sd_list: ['/given_name'] } })).body;
    const offered = (await hit('issueCredentialOffer', '/api/v1/oid4vci/issue', 200, { key, body: { supported_cred_id: sd.supported_cred_id, credential_subject: { given_name: 'E' }, did } })).body;
    const received = await new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }).receive(offered.credential_offer_uri);

    const T = '/api/v1/settings/trusted-issuers';
    expect((await hit('getTrustedIssuers', T, 200, { key })).body).toEqual([]);
    await hit('putTrustedIssuers', T, 400, { key, body: { issuers: ['http://issuer.example', '*'] } });
    await hit('putTrustedIssuers', T, 400, { key, body: {} });
    expect((await hit('putTrustedIssuers', T, 200, { key, body: { issuers: ['did:web:issuer.example', 'https://issuer.example'] } })).body).toEqual(['did:web:issuer.example', 'https://issuer.example']);
    expect((await hit('getTrustedIssuers', T, 200, { key })).body).toEqual(['did:web:issuer.example', 'https://issuer.example']);

    const P = '/api/v1/oid4vp/presentation-definitions';
    const pres_def = { id: 'pid', input_descriptors: [{ id: 'pid', format: { 'dc+sd-jwt': {} }, constraints: { fields: [{ path: ['$.vct'], filter: { type: 'string', const: 'urn:pid' } }, { path: ['$.given_name'] }] } }] };
    await hit('createPresentationDefinition', P, 400, { key, body: { pres_def: { id: 'x' } } });
    const def = (await hit('createPresentationDefinition', P, 200, { key, body: { pres_def } })).body;
    await hit('listPresentationDefinitions', P, 200, { key });
    await hit('listPresentationDefinitions', `${P}?limit=0`, 400, { key });
    await hit('getPresentationDefinition', `${P}/${def.pres_def_id}`, 200, { key });
    await hit('getPresentationDefinition', `${P}/no-such-definition`, 404, { key });

    const R = '/api/v1/oid4vp/request';
    const vp_formats = { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256', 'EdDSA'], 'kb-jwt_alg_values': ['ES256'] } };
    await hit('createPresentationRequest', R, 400, { key, body: { pres_def_id: def.pres_def_id, vp_formats: { ldp_vc: {} }, did } });
    await hit('createPresentationRequest', R, 404, { key, body: { pres_def_id: 'no-such-definition', vp_formats, did } });
    const created = (await hit('createPresentationRequest', R, 200, { key, body: { pres_def_id: def.pres_def_id, vp_formats, did } })).body;
    const requestPath = new URL(new URLSearchParams(created.request_uri.split('?')[1]).get('request_uri')!).pathname;
    await hit('getRequestObject', `${requestPath}?profile=nope`, 400);
    const verifierPath = requestPath.replace(/\/request\/[^/]+$/, '');
    await hit('getRequestObject', `${verifierPath}/request/00000000-0000-4000-8000-000000000000`, 404);
    await hit('getRequestObject', `${verifierPath}/request/not-a-uuid`, 400);
    await hit('getRequestObject', requestPath.replace(verifierPath, `/oid4vp/${w.walletId}`), 404);
    const jws = (await hit('getRequestObject', requestPath, 200)).text;
    await hit('getRequestObject', requestPath, 400); // once only
    const request = JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));
    const { fields } = await answerDcql(request, { pid: received.credentials[0]! }, received.holderKeys[0]!, { dryRun: true });
    const responsePath = new URL(request.response_uri).pathname;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    await hit('postPresentationResponse', responsePath, 400, { rawBody: new URLSearchParams({ ...fields, state: 'another' }).toString(), headers: form });
    await hit('postPresentationResponse', `${verifierPath}/response/00000000-0000-4000-8000-000000000000`, 404, { rawBody: new URLSearchParams(fields).toString(), headers: form });
    await hit('postPresentationResponse', responsePath.replace(verifierPath, `/oid4vp/${w.walletId}`), 404, { rawBody: new URLSearchParams(fields).toString(), headers: form });
    await hit('postPresentationResponse', responsePath, 200, { rawBody: new URLSearchParams(fields).toString(), headers: form });
    await hit('postPresentationResponse', responsePath, 400, { rawBody: new URLSearchParams(fields).toString(), headers: form }); // answered already

    const V = '/api/v1/oid4vp/presentations';
    const id = created.presentation.presentation_id;
    await hit('listPresentations', V, 200, { key });
    await hit('listPresentations', `${V}?state=presentation-valid&pres_def_id=${def.pres_def_id}&limit=1`, 200, { key });
    await hit('listPresentations', `${V}?state=nope`, 400, { key });
    // Issued from a DID of the verifier's own wallet: trusted with no setting naming it.
    expect((await hit('getPresentation', `${V}/${id}`, 200, { key })).body).toMatchObject({ state: 'presentation-valid', matched_credentials: { pid: { issuer: did, issuer_trust: 'own_did' } } });
    await hit('getPresentation', `${V}/no-such-presentation`, 404, { key });
    await hit('deletePresentation', `${V}/${id}`, 200, { key });
    await hit('deletePresentation', `${V}/${id}`, 404, { key });
    await hit('deletePresentationDefinition', `${P}/${def.pres_def_id}`, 200, { key });
    await hit('deletePresentationDefinition', `${P}/${def.pres_def_id}`, 404, { key });
  });
});

describe('DIDComm', () => {
  test('invitations, connections and messages', async () => {
    const w = await newWallet('DIDComm');
    const other = await newWallet('DIDComm other');
    const key = w.apiKey;
    const I = '/api/v1/invitations';
    await hit('createInvitation', I, 400, { key, body: { multi_use: 'yes' } });
    await hit('createInvitation', I, 400, { key, body: { unknown: 1 } });
    const created = (await hit('createInvitation', I, 200, { key, body: { label: 'Schema', multi_use: true, qr: true } })).body;
    expect(created.invitation_id).toBe(1);
    await hit('createInvitation', I, 200, { key });
    await hit('listInvitations', I, 200, { key });
    await hit('listInvitations', `${I}?limit=1`, 200, { key });
    await hit('listInvitations', `${I}?limit=0`, 400, { key });
    await hit('getInvitation', `${I}/1`, 200, { key });
    await hit('getInvitation', `${I}/1`, 404, { key: other.apiKey });
    await hit('getInvitation', `${I}/abc`, 400, { key });
    await hit('deleteInvitation', `${I}/2`, 200, { key });
    await hit('deleteInvitation', `${I}/2`, 404, { key });
    await hit('deleteInvitation', `${I}/0`, 400, { key });

    // A connection and a message as the DIDComm worker stores them (seeded: this test drives no peer).
    const connectionId = '01KAAAAAAAAAAAAAAAAAAAAAAC';
    const messageId = '01KAAAAAAAAAAAAAAAAAAAAAAM';
    const at = new Date().toISOString();
    const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
    await ddb.send(new PutCommand({ TableName: api.rt.tableName, Item: { PK: `W#${w.walletId}`, SK: `DCCONN#${connectionId}`, type: 'didcomm_connection', connection_id: connectionId, state: 'active', rfc23_state: 'completed', their_label: 'Peer', their_did: 'did:peer:4zQm', my_did: 'did:peer:4zQn', their_role: 'invitee', invitation_key: created.invitation.services[0].recipientKeys[0], invitation_msg_id: created.invitation['@id'], invitation_mode: 'multi', connection_protocol: 'didexchange/1.1', alias: null, invitation_id: 1, error_msg: null, created_at: at, updated_at: at } }));
    await ddb.send(new PutCommand({ TableName: api.rt.tableName, Item: { PK: `W#${w.walletId}`, SK: `DCMSG#${messageId}`, type: 'didcomm_message', message_id: messageId, invitation_id: 1, contact_id: connectionId, message: 'hello', direction: 'received', sent_time: at, state: 'received', created_at: at, updated_at: at } }));
    ddb.destroy();

    const C = '/api/v1/connections';
    expect((await hit('listConnections', C, 200, { key })).body.map((c: any) => c.contact_id)).toEqual([connectionId]);
    await hit('listConnections', `${C}?sort-field=created_at&sort-direction=asc&page-size=10&current-page=1&item-count=5`, 200, { key });
    await hit('listConnections', `${C}?sort-field=their_did`, 400, { key });
    await hit('listConnections', `${C}?page-size=100&current-page=11`, 400, { key });
    expect((await hit('listConnections', C, 200, { key: other.apiKey })).body).toEqual([]);
    await hit('getConnection', `${C}/${connectionId}`, 200, { key });
    await hit('getConnection', `${C}/${connectionId}`, 404, { key: other.apiKey });
    await hit('getConnection', `${C}/${'x'.repeat(129)}`, 400, { key });

    const M = '/api/v1/messages';
    await hit('listMessages', M, 200, { key });
    await hit('listMessages', `${M}?cursor=nope`, 400, { key });
    await hit('getMessage', `${M}/${messageId}`, 200, { key });
    await hit('getMessage', `${M}/${messageId}`, 404, { key: other.apiKey });
    await hit('getMessage', `${M}/${'x'.repeat(129)}`, 400, { key });

    // The public endpoint: an envelope to the invitation's key is taken (202, no body); the agent's verdict comes later, from the worker.
    const D = `/didcomm/${(await hit('getOwnWallet', '/api/v1/wallet', 200, { key })).body.public_ref}`;
    const envelope = Buffer.from(packMessage({ '@type': 'https://didcomm.org/trust_ping/1.0/ping', '@id': 'p' }, [verkeyFromDidKey(created.invitation.services[0].recipientKeys[0])])).toString();
    const wire = { 'content-type': 'application/didcomm-envelope-enc' };
    await hit('postDidcommEnvelope', D, 202, { rawBody: envelope, headers: wire });
    await hit('postDidcommEnvelope', D, 415, { rawBody: envelope, headers: { 'content-type': 'text/plain' } });
    await hit('postDidcommEnvelope', D, 400, { rawBody: '{"protected":"e30"}', headers: wire });
    await hit('postDidcommEnvelope', '/didcomm/AAAAAAAAAAAAAAAAAAAAAA', 404, { rawBody: envelope, headers: wire });
    await hit('postDidcommEnvelope', D, 413, { rawBody: JSON.stringify({ ciphertext: 'x'.repeat(300 * 1024) }), headers: wire });
    // Sending: the seeded connection has no peer (this test drives none), so it is not usable yet.
    await hit('sendMessage', M, 409, { key, body: { contact_id: connectionId, message: 'hi' } });
    await hit('sendMessage', M, 404, { key: other.apiKey, body: { contact_id: connectionId, message: 'hi' } });
    await hit('sendMessage', M, 400, { key, body: { contact_id: connectionId } });
    await hit('sendMessage', M, 400, { key, body: { message: 'hi', invitation_id: 'one' } });
    // Receiving the other wallet's invitation: a connection in state request (its request is sent by the outbound worker).
    const theirs = (await hit('createInvitation', I, 200, { key: other.apiKey, body: { label: 'Other', multi_use: true } })).body;
    const R = `${I}/receive`;
    expect((await hit('receiveInvitation', R, 200, { key, body: { invitation_url: theirs.invitation_url, alias: 'other' } })).body).toMatchObject({ state: 'request', their_label: 'Other' });
    await hit('receiveInvitation', R, 200, { key, body: { invitation: theirs.invitation } });
    await hit('receiveInvitation', R, 400, { key, body: {} });
    await hit('receiveInvitation', R, 400, { key, body: { invitation_url: 'https://agent.example.test/?c_i=e30' } });
    await hit('receiveInvitation', R, 400, { key, body: { invitation: { hello: 'world' } } });
    // The first received invitation's connection completes through both wallets' endpoints and workers; then a message is queued on it.
    const accepted = (await api.call('GET', '/api/v1/connections', { key })).body.find((c: any) => c.alias === 'other');
    await eventually(async () => ((await api.call('GET', `/api/v1/connections/${accepted.connection_id}`, { key })).body.state === 'active' ? true : undefined), 30_000, 'the connection to the other wallet');
    expect((await hit('sendMessage', M, 200, { key, body: { contact_id: accepted.connection_id, message: 'hello other' } })).body.success).toContain(accepted.connection_id);
  });
});

describe('bulk email', () => {
  test('verify and the recipient list', async () => {
    const w = await newWallet();
    const key = w.apiKey;
    await hit('createSdJwtSupportedCredential', '/api/v1/oid4vci/credentials-supported/sd-jwt', 200, { key, body: { id: 'Card', vct: 'urn:card', claims: { name: { mandatory: true } } } });
    const emails = [
      { email: 'a@example.org', schema_id: 'Card', time_to_accept: 1, attributes: [{ name: 'name', value: 'A' }] },
      { email: 'nope', schema_id: 'Card', time_to_accept: 1, attributes: [] },
      { email: 'b@example.org', schema_id: 'Unknown', time_to_accept: 1, attributes: [] },
    ];
    await hit('verifyEmails', '/api/v1/emails/verify', 200, { key, body: { emails } });
    await hit('verifyEmails', '/api/v1/emails/verify', 400, { key, body: { emails: 'x' } });
    await hit('verifyEmails', '/api/v1/emails/verify', 200, { key, body: { emails: emails.slice(0, 1) }, headers: { 'idempotency-key': 'k1' } });
    await hit('verifyEmails', '/api/v1/emails/verify', 409, { key, body: { emails: emails.slice(1) }, headers: { 'idempotency-key': 'k1' } });
    await hit('listEmails', '/api/v1/emails', 200, { key });
    await hit('listEmails', '/api/v1/emails?state=failed&limit=1', 200, { key });
    await hit('listEmails', '/api/v1/emails?state=nope', 400, { key });
  });
});

describe('JSON-LD context files', () => {
  test('store, list and read; immutable; bad input', async () => {
    const w = await newWallet();
    const key = w.apiKey;
    const ref = (await hit('getOwnWallet', '/api/v1/wallet', 200, { key })).body.public_ref as string;
    const file = { '@context': { Employee: 'https://acme.example/vocab#Employee' } };
    await hit('createContextFile', '/api/v1/context', 200, { key, body: { context_file_id: 'employee-v1.jsonld', file } });
    await hit('createContextFile', '/api/v1/context', 409, { key, body: { context_file_id: 'employee-v1.jsonld', file: { '@context': { Employee: 'https://other.example/E' } } } });
    await hit('createContextFile', '/api/v1/context', 400, { key, body: { context_file_id: '../x', file } });
    await hit('createContextFile', '/api/v1/context', 400, { key, body: { context_file_id: 'remote.jsonld', file: { '@context': 'https://schema.org/' } } });
    await hit('createContextFile', '/api/v1/context', 413, { key, body: { context_file_id: 'big.jsonld', file: { '@context': { t: 'https://e.example/'.padEnd(70_000, 'x') } } } });
    await hit('listContextFiles', `/context?public_ref=${ref}`, 200);
    await hit('listContextFiles', '/context', 200);
    await hit('listContextFiles', '/context?public_ref=AAAAAAAAAAAAAAAAAAAAAA', 404);
    const got = await hit('getContextFile', `/context/${ref}:employee-v1.jsonld`, 200);
    await hit('getContextFile', `/context/${ref}:employee-v1.jsonld`, 304, { headers: { 'if-none-match': got.headers.get('etag')! } });
    await hit('getContextFile', `/context/${ref}:missing.jsonld`, 404);
  });
});

describe('AnonCreds registry', () => {
  test('schemas and credential definitions (wait, then finished by the worker), their public objects; bad input', async () => {
    const w = await newWallet();
    const key = w.apiKey;
    await hit('createSchema', '/api/v1/schemas', 400, { key, body: { schema_name: 'degree', schema_version: '1.0', attributes: ['name'] } });
    await api.call('POST', '/api/v1/accept-taa', { key, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } });
    const did = (await api.call('POST', '/api/v1/create-did', { key, body: { method: 'web' } })).body.did.did as string;
    await api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(did)}`, { key });
    const schema = (await hit('createSchema', '/api/v1/schemas', 200, { key, body: { schema_name: 'degree', schema_version: '1.0', attributes: ['name', 'degree'] } })).body;
    await hit('createSchema', '/api/v1/schemas', 409, { key, body: { schema_name: 'degree', schema_version: '1.0', attributes: ['name'] } });
    await hit('createSchema', '/api/v1/schemas', 400, { key, body: { schema_name: 'degree', schema_version: '2.0', attributes: ['Name', 'name'] } });
    await hit('listSchemas', '/api/v1/schemas', 200, { key });
    await hit('listSchemas', '/api/v1/schemas?limit=1', 200, { key });
    await hit('listSchemas', '/api/v1/schemas?cursor=nope', 400, { key });
    await hit('getSchema', `/api/v1/schemas/${encodeURIComponent(schema.schema_id)}`, 200, { key });
    await hit('getSchema', '/api/v1/schemas/unknown', 404, { key });
    const requested = (await hit('createCredentialDefinition', '/api/v1/credential-definitions', 202, { key, body: { schema_id: schema.schema_id, tag: 'default' } })).body;
    await hit('createCredentialDefinition', '/api/v1/credential-definitions', 409, { key, body: { schema_id: schema.schema_id, tag: 'default' } });
    await hit('createCredentialDefinition', '/api/v1/credential-definitions', 400, { key, body: { schema_id: schema.schema_id, tag: 'revocable', support_revocation: true, revocation_registry_size: 1 } });
    const revocable = (await hit('createCredentialDefinition', '/api/v1/credential-definitions', 202, { key, body: { schema_id: schema.schema_id, tag: 'revocable', support_revocation: true, revocation_registry_size: 10 } })).body;
    await hit('createCredentialDefinition', '/api/v1/credential-definitions', 404, { key, body: { schema_id: 'unknown' } });
    await hit('getCredentialDefinition', `/api/v1/credential-definitions/${requested.id}`, 200, { key });
    const done = await eventually(async () => {
      const r = (await hit('getCredentialDefinition', `/api/v1/credential-definitions/${requested.id}`, 200, { key })).body;
      return r.state === 'finished' ? r : undefined;
    }, 60_000);
    await hit('getCredentialDefinition', '/api/v1/credential-definitions/unknown', 404, { key });
    await hit('listCredentialDefinitions', '/api/v1/credential-definitions', 200, { key });
    await hit('listCredentialDefinitions', '/api/v1/credential-definitions?cursor=nope', 400, { key });
    const path = (url: string) => url.slice(api.rt.url.length);
    const s = await hit('getSchemaResource', path(schema.url), 200);
    await hit('getSchemaResource', path(schema.url), 304, { headers: { 'if-none-match': s.headers.get('etag')! } });
    await hit('getSchemaResource', path(schema.url).replace(/[^/]+$/, 'x'), 404);
    await hit('getSchemaResource', '/dids/0OIl/anoncreds/schema/x', 400);
    await hit('getCredentialDefinitionResource', path(done.url), 200);
    await hit('getCredentialDefinitionResource', path(schema.url).replace('/schema/', '/credDef/'), 404);
    await hit('getCredentialDefinitionResource', '/dids/0OIl/anoncreds/credDef/x', 400);
    // The revocable definition's registry: its definition, status list and tails file.
    const rev = await eventually(async () => {
      const r = (await hit('getCredentialDefinition', `/api/v1/credential-definitions/${revocable.id}`, 200, { key })).body;
      return r.state === 'finished' ? r : undefined;
    }, 60_000);
    const reg = rev.revocation_registry;
    await hit('getRevocationRegistryResource', path(reg.url), 200);
    await hit('getRevocationRegistryResource', path(reg.url).replace(/[^/]+$/, 'x'), 404);
    await hit('getRevocationStatusListResource', `${path(reg.status_list_url)}/${Math.floor(Date.now() / 1000)}`, 200);
    await hit('getRevocationStatusListResource', `${path(reg.status_list_url)}/1000`, 404);
    await hit('getTailsFile', path(reg.tails_location), 200);
    await hit('getTailsFile', path(reg.tails_location).replace(/[^/]+$/, 'x'), 404);
    // Revocation (contract 4.2): exchanges as AnonCreds issuance leaves them, an index allocated (seeded: this test drives no holder).
    const ddbClient = new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb });
    const store = new DynamoDbStore(() => ddbClient, api.rt.tableName);
    const scope = tenantScope(String(w.walletId));
    const index = await new RevocationRegistryStore(store).allocateIndex(scope, parseObjectId(reg.revocation_registry_id, 'revRegDef')!.resourceId);
    const at = new Date().toISOString();
    const exchange = (id: string, state: string, record: Record<string, unknown> | null) => ({
      PK: `W#${w.walletId}`, SK: `CREX#${id}`, type: 'credential_exchange', credential_exchange_id: id, connection_id: '01KAAAAAAAAAAAAAAAAAAAAAAC', invitation_id: null, invitation_url: null, thread_id: `t-${id}`, parent_thread_id: null,
      role: 'issuer', initiator: 'self', state, format: 'anoncreds', revocation_def_id: null, error_msg: null, created_at: at, updated_at: at, offer: {}, request: null, credential: record ? {} : null, offer_message: null, format_options: {}, format_record: record,
    });
    const issuedId = '01KAAAAAAAAAAAAAAAAAAAAAAR';
    const offeredId = '01KAAAAAAAAAAAAAAAAAAAAAAO';
    await store.write([
      { type: 'put', item: exchange(issuedId, 'done', { schema_id: schema.schema_id, cred_def_id: rev.credential_definition_id, rev_reg_id: reg.revocation_registry_id, cred_rev_id: String(index) }) },
      { type: 'put', item: exchange(offeredId, 'offer-sent', null) },
    ]);
    const R = '/api/v1/credentials/anoncreds/revoke';
    await hit('revokeAnonCredsCredential', R, 400, { key, body: {} });
    await hit('revokeAnonCredsCredential', R, 400, { key, body: { credential_exchange_id: issuedId, connection_id: '01KAAAAAAAAAAAAAAAAAAAAAAX' } });
    await hit('revokeAnonCredsCredential', R, 404, { key, body: { credential_exchange_id: '01KAAAAAAAAAAAAAAAAAAAAAAZ' } });
    await hit('revokeAnonCredsCredential', R, 409, { key, body: { credential_exchange_id: offeredId } });
    await hit('revokeAnonCredsCredential', R, 200, { key, body: { credential_exchange_id: issuedId } });
    await hit('revokeAnonCredsCredential', R, 200, { key, body: { credential_exchange_id: issuedId } });
    ddbClient.destroy();

    // AnonCreds issuance (contract 4.2): an offer in a new invitation, its record; bad input.
    const I = '/api/v1/credentials';
    const attributes = [{ name: 'name', value: 'Ada' }, { name: 'degree', value: 'Maths' }];
    const offered = (await hit('issueAnonCredsCredential', I, 200, { key, body: { schema_id: schema.schema_id, cred_def_id: done.credential_definition_id, attributes } })).body[0];
    expect(offered).toMatchObject({ format: 'anoncreds', state: 'offer-sent', invitation_url: expect.any(String) });
    const rec = (await hit('getCredentialRecord', `/api/v1/credential-records/${offered.credential_exchange_id}`, 200, { key })).body;
    expect(rec.anoncreds).toMatchObject({ schema_id: schema.schema_id, cred_def_id: done.credential_definition_id, cred_rev_id: null });
    await hit('issueAnonCredsCredential', I, 400, { key, body: { schema_id: schema.schema_id, attributes, rule: 'x' } });
    await hit('issueAnonCredsCredential', I, 400, { key, body: { schema_id: schema.schema_id, attributes: attributes.slice(1) } });
    await hit('issueAnonCredsCredential', `${I}?timeout=99`, 400, { key, body: { schema_id: schema.schema_id, attributes } });
    await hit('issueAnonCredsCredential', I, 404, { key, body: { schema_id: 'unknown', attributes } });
    const pendingId = '01KAAAAAAAAAAAAAAAAAAAAAAQ';
        await DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb })).send(new PutCommand({ TableName: api.rt.tableName, Item: { PK: `W#${w.walletId}`, SK: `DCCONN#${pendingId}`, type: 'didcomm_connection', connection_id: pendingId, state: 'request', rfc23_state: 'request-sent', their_label: 'Peer', their_did: null, my_did: 'did:peer:4zQn', their_role: 'inviter', invitation_key: null, invitation_msg_id: null, invitation_mode: 'once', connection_protocol: 'didexchange/1.1', alias: null, invitation_id: null, error_msg: null, created_at: at, updated_at: new Date().toISOString() } }));
    await hit('issueAnonCredsCredential', I, 409, { key, body: { schema_id: schema.schema_id, cred_def_id: done.credential_definition_id, attributes, contact_id: pendingId } });
  });
});

describe('JSON-LD credentials over DIDComm', () => {
  test('offer (carried by a new connectionless invitation), exchanges, the issued credential and its record; bad input', async () => {
    const w = await newWallet();
    const other = await newWallet();
    const key = w.apiKey;
    const did = (await hit('createDid', '/api/v1/create-did', 200, { key, body: { method: 'key' } })).body.did.did as string;
    const credential = { '@context': ['https://www.w3.org/2018/credentials/v1', { ex: 'https://example.com/vocab#', memberName: 'ex:memberName' }], type: ['VerifiableCredential'], issuer: did, issuanceDate: '2026-11-26T00:00:00Z', credentialSubject: { memberName: 'Ada' } };
    const J = '/api/v1/credentials/json-ld';
    const made = (await hit('issueJsonLdCredential', J, 200, { key, body: { credential, proofType: 'Ed25519Signature2018' } })).body[0];
    await hit('issueJsonLdCredential', J, 400, { key, body: { credential, rule: 'x' } });
    await hit('issueJsonLdCredential', J, 400, { key, body: { credential: { ...credential, credentialSubject: { nickname: 'x' } } } });
    await hit('issueJsonLdCredential', `${J}?timeout=99`, 400, { key, body: { credential } });
    await hit('issueJsonLdCredential', J, 404, { key, body: { credential, contact_id: '01KAAAAAAAAAAAAAAAAAAAAAAZ' } });
    // A connection whose DID Exchange has not completed (seeded: this test drives no peer).
    const pendingId = '01KAAAAAAAAAAAAAAAAAAAAAAP';
    const at = new Date().toISOString();
    const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: api.rt.endpoints.dynamodb }));
    await ddb.send(new PutCommand({ TableName: api.rt.tableName, Item: { PK: `W#${w.walletId}`, SK: `DCCONN#${pendingId}`, type: 'didcomm_connection', connection_id: pendingId, state: 'request', rfc23_state: 'request-sent', their_label: 'Peer', their_did: null, my_did: 'did:peer:4zQn', their_role: 'inviter', invitation_key: null, invitation_msg_id: null, invitation_mode: 'once', connection_protocol: 'didexchange/1.1', alias: null, invitation_id: null, error_msg: null, created_at: at, updated_at: at } }));
    await hit('issueJsonLdCredential', J, 409, { key, body: { credential, contact_id: pendingId } });
    // The connectionless invitation the first offer made: it makes no connection to offer on.
    expect((await hit('issueJsonLdCredential', J, 409, { key, body: { credential, invitation_id: made.invitation_id } })).body.code).toBe('invitation_connectionless');
    // An exchange as the issuing worker leaves it once the holder acked (seeded likewise).
    const doneId = '01KAAAAAAAAAAAAAAAAAAAAAAD';
    const signed = { ...credential, proof: { type: 'Ed25519Signature2018', created: at, verificationMethod: `${did}#${did.slice(8)}`, proofPurpose: 'assertionMethod', jws: 'eyJhbGciOiJFZERTQSIsImI2NCI6ZmFsc2UsImNyaXQiOlsiYjY0Il19..c2ln' } };
    const options = { proofType: 'Ed25519Signature2018', proofPurpose: 'assertionMethod' };
    await ddb.send(new PutCommand({ TableName: api.rt.tableName, Item: { PK: `W#${w.walletId}`, SK: `CREX#${doneId}`, type: 'credential_exchange', credential_exchange_id: doneId, connection_id: pendingId, invitation_id: null, invitation_url: null, thread_id: 't-done', parent_thread_id: null, role: 'issuer', initiator: 'self', state: 'done', format: 'ld_proof', revocation_def_id: null, error_msg: null, created_at: at, updated_at: at, offer: { credential, options }, request: { credential, options }, credential: signed, offer_message: null, format_options: { issuer_did: did, proof_type: 'Ed25519Signature2018', verification_method: signed.proof.verificationMethod }, format_record: { proof_type: 'Ed25519Signature2018' } } }));
    ddb.destroy();
    const C = '/api/v1/credentials';
    expect((await hit('listCredentialExchanges', C, 200, { key })).body.map((x: any) => x.credential_exchange_id)).toEqual([doneId, made.credential_exchange_id].sort());
    await hit('listCredentialExchanges', `${C}?limit=1`, 200, { key });
    await hit('listCredentialExchanges', `${C}?cursor=nope`, 400, { key });
    expect((await hit('listCredentialExchanges', C, 200, { key: other.apiKey })).body).toEqual([]);
    await hit('getCredentialExchange', `${C}/${made.credential_exchange_id}`, 200, { key });
    await hit('getCredentialExchange', `${C}/${made.credential_exchange_id}`, 404, { key: other.apiKey });
    await hit('getCredentialExchange', `${C}/${'x'.repeat(129)}`, 400, { key });
    await hit('getJsonLdCredential', `${J}/${doneId}`, 200, { key });
    await hit('getJsonLdCredential', `${J}/${made.credential_exchange_id}`, 409, { key });
    await hit('getJsonLdCredential', `${J}/${doneId}`, 404, { key: other.apiKey });
    await hit('getJsonLdCredential', `${J}/${'x'.repeat(129)}`, 400, { key });
    await hit('getCredentialRecord', `/api/v1/credential-records/${doneId}`, 200, { key });
    await hit('getCredentialRecord', `/api/v1/credential-records/${made.credential_exchange_id}`, 200, { key });
    await hit('getCredentialRecord', `/api/v1/credential-records/${doneId}`, 404, { key: other.apiKey });
    await hit('getCredentialRecord', `/api/v1/credential-records/${'x'.repeat(129)}`, 400, { key });
  });
});

describe('meta', () => {
  test('the document, the reference page and its files', async () => {
    await hit('getOpenApi', '/openapi.json', 200);
    await hit('getDocsPage', '/docs', 200);
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'docs-init.js']) await hit('getDocsAsset', `/docs/${asset}`, 200);
    await hit('getDocsAsset', '/docs/package.json', 404);
    await hit('getDocsAsset', `/docs/${'a'.repeat(101)}.js`, 400);
  });

  test('public routes are throttled too (429)', async () => {
    const statuses = await Promise.all(Array.from({ length: 100 }, () => hit('getDocsPage', '/docs', [200, 429]).then((r) => r.status)));
    expect(statuses).toContain(429);
  });
});

describe('credentials', () => {
  const PARAMS: Record<string, string> = { wallet_id: '1', key_id: 'k1', delivery_id: UNKNOWN_DELIVERY, did: A_DID_KEY, id: 'NotARealDidAtAll12345', asset: 'x.js' };
  const concrete = (r: Route) => r.path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(PARAMS[name] ?? 'x'));

  test('every protected route: no key and an unknown key 401, the wrong kind of key 403', async () => {
    const w = await newWallet();
    for (const route of ROUTES.filter((r) => r.auth !== 'public')) {
      await hit(route.operationId, concrete(route), 401);
      await hit(route.operationId, concrete(route), 401, { key: 'cisk_NotARealKey' });
      await hit(route.operationId, concrete(route), 403, { key: route.auth === 'superadmin' ? w.apiKey : api.baseKey });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Coverage: a route added later without a scenario fails here.

describe('coverage', () => {
  const successOf = (operationId: string) => ALL_CONTRACTS[operationId]!.status ?? 200;
  // Routes with no request a client can get wrong.
  const NO_NATURAL_4XX = new Set(['getOpenApi', 'getDocsPage']);

  test('every route of the table was answered with its success status', () => {
    const expected = ROUTES.map((r) => `${r.operationId} ${successOf(r.operationId)}`).sort();
    const seen = [...new Set(observed.filter((o) => o.status >= 200 && o.status < 300).map((o) => `${o.operationId} ${o.status}`))].sort();
    expect(seen).toEqual(expected);
  });

  test('every status observed is declared for its operation', () => {
    const undeclared = observed.filter((o) => {
      const route = byId.get(o.operationId)!;
      return !(String(o.status) in doc.paths[route.path][route.method.toLowerCase()].responses);
    });
    expect([...new Set(undeclared.map((o) => `${o.operationId} ${o.status}`))]).toEqual([]);
  });

  test('the document declares exactly that success status for every operation', () => {
    const declared = ROUTES.map((r) => {
      const codes = Object.keys(doc.paths[r.path][r.method.toLowerCase()].responses).filter((s) => s.startsWith('2'));
      return `${r.operationId} ${codes.join(',')}`;
    });
    expect(declared).toEqual(ROUTES.map((r) => `${r.operationId} ${successOf(r.operationId)}`));
  });

  test('every route with something to get wrong was driven into a 4xx', () => {
    const with4xx = new Set(observed.filter((o) => o.status >= 400 && o.status < 500).map((o) => o.operationId));
    expect(ROUTES.filter((r) => !NO_NATURAL_4XX.has(r.operationId) && !with4xx.has(r.operationId)).map((r) => r.operationId)).toEqual([]);
  });
});
