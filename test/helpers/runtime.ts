import { observeGuardDecisions, type GuardDecision } from '../../lib/adapters/access-guard';
import { LOCAL_TAA, startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../../infra/local/runtime';
import { SHARED_DYNAMODB_ENV } from './shared-dynamodb';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly key?: string | null;
  readonly body?: unknown;
  /** Sent as is (for malformed or oversized bodies). */
  readonly rawBody?: string | Buffer;
  readonly headers?: Record<string, string>;
}

export interface TestApi {
  readonly rt: LocalRuntime;
  readonly baseKey: string;
  call<T = any>(method: string, path: string, opts?: CallOptions): Promise<ApiResponse<T>>;
  /** Creates a subwallet and an admin key for it; `publicRef` names it in public URLs (GET /api/v1/wallet). */
  newWallet(name?: string): Promise<{ walletId: number; token: string; apiKey: string; keyId: string; publicRef: string }>;
}

let counter = 0;

/**
 * The same runtime as `npm start`, on free ports with in-memory data; talks to it over HTTP.
 * `ownDynamoDb`: a DynamoDB Local of this runtime's own (a child of this process), not the run's shared one.
 */
export async function startTestApi(opts: Omit<LocalRuntimeOptions, 'port' | 'dataDir'> & { ownDynamoDb?: boolean } = {}): Promise<TestApi> {
  const { ownDynamoDb, ...runtimeOpts } = opts;
  // No decision cache by default, so revocation tests see the effect at once; cache tests set a TTL.
  // Every test request comes from 127.0.0.1, one source standing for many clients: no per-source limit
  // unless a test sets one (test/integration/source-limits.test.ts).
  const rt = await startLocalRuntime({
    logLevel: (process.env.TEST_LOG_LEVEL as 'SILENT') ?? 'SILENT',
    authorizerCacheTtlSeconds: 0,
    sourceLimits: { allRequests: Number.MAX_SAFE_INTEGER, publicRequests: Number.MAX_SAFE_INTEGER },
    ...runtimeOpts,
    port: 0,
    dataDir: null,
    // The run's shared DynamoDB Local when Jest's global setup started one (test/helpers/shared-dynamodb.ts).
    ...(process.env[SHARED_DYNAMODB_ENV] && !ownDynamoDb ? { sharedDynamoDb: process.env[SHARED_DYNAMODB_ENV] } : {}),
  });
  if (!rt.baseApiKey) throw new Error('an in-memory runtime always generates a base key');
  const baseKey = rt.baseApiKey;

  const call = async <T>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers['x-api-key'] = opts.key;
    let body: string | Buffer | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${rt.url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };

  const newWallet = async (name = `wallet-${process.pid}-${++counter}`) => {
    const w = await call<any>('POST', '/api/subwallet/create', { key: baseKey, body: { wallet_name: name } });
    if (w.status !== 200) throw new Error(`subwallet create: ${w.status} ${JSON.stringify(w.body)}`);
    const k = await call<any>('POST', '/api/apikey/create', { key: baseKey, body: { wallet_id: String(w.body.wallet_id), roles: ['admin'] } });
    if (k.status !== 200) throw new Error(`apikey create: ${k.status} ${JSON.stringify(k.body)}`);
    const me = await call<any>('GET', '/api/v1/wallet', { key: k.body.api_key });
    if (me.status !== 200) throw new Error(`wallet: ${me.status} ${JSON.stringify(me.body)}`);
    return { walletId: w.body.wallet_id, token: w.body.token, apiKey: k.body.api_key, keyId: k.body.key_id, publicRef: me.body.public_ref };
  };

  return { rt, baseKey, call, newWallet };
}

/** An error answer: the status, and the documented `{error, code}` body. */
export function expectError(res: { status: number; body: any }, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual(expect.objectContaining({ error: expect.any(String), code }));
}

/** The body of a 200 answer; anything else throws with the status and body (setup steps, not assertions). */
export async function ok<T = any>(p: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const res = await p;
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A new wallet whose public DID is a new DID of `didBody` (the agreement accepted first, as publishing needs). */
export async function walletWithPublicDid(api: TestApi, didBody: Record<string, unknown>): Promise<{ key: string; walletId: number; publicRef: string; did: string }> {
  const w = await api.newWallet();
  await ok(api.call('POST', '/api/v1/accept-taa', { key: w.apiKey, body: { mechanism: 'service_agreement', version: LOCAL_TAA.version } }), 'accept-taa');
  const d = (await ok(api.call('POST', '/api/v1/create-did', { key: w.apiKey, body: didBody }), 'create-did')).did;
  await ok(api.call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(d.did)}`, { key: w.apiKey }), 'set-public-did');
  return { key: w.apiKey, walletId: w.walletId, publicRef: w.publicRef, did: d.did as string };
}

/**
 * A test API for the whole file whose access-guard decisions are recorded (which wallet's session
 * made each call): `decisions` fills as the runtime works; started in beforeAll, stopped in afterAll.
 */
export function observedTestApi(): { readonly api: () => TestApi; readonly decisions: GuardDecision[] } {
  let api: TestApi | undefined;
  let stop: (() => void) | undefined;
  const decisions: GuardDecision[] = [];
  beforeAll(async () => {
    api = await startTestApi();
    stop = observeGuardDecisions((d) => decisions.push(d));
  });
  afterAll(async () => {
    stop?.();
    await api?.rt.stop();
  });
  return { api: () => api!, decisions };
}
