/**
 * Part of `npm run bench` (see run.ts): the OID4VCI pre-authorized flow, for docs/benchmarks.md.
 *
 * 1. The whole flow a wallet runs after reading an offer (token → nonce → credential with one
 *    proof), through the local runtime over HTTP, at 1 and 20 concurrent wallets. Offers are created
 *    beforehand (untimed); the wallets are the spec wallet (test/helpers/spec-wallet.ts) in this
 *    process, so their own proof signing shares the loop with the service.
 * 2. The credential endpoint's own handler time: the same Lambda handler the runtime serves, called
 *    in-process with the gateway's event (HTTP excluded), next to the raw cost of creating the same
 *    SD-JWT VC (same claims, disclosure frame, holder binding) with `@sd-jwt/core` on a key of the same
 *    type, measured in the same run. Their ratio is the service's overhead: token check, proof check,
 *    nonce spend, state transaction with its event.
 */
import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { SDJwtInstance } from '@sd-jwt/core';
import { runBench, startBenchRuntime } from './harness';
import { lambdaContext } from '../../infra/local/lambda-context';
import { disclosureFrame } from '../../lib/oid4vci/protocol/formats';
import { SpecWallet } from '../helpers/spec-wallet';

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const FLOWS = { 1: Number(process.env.BENCH_FLOWS_1 ?? 300), 20: Number(process.env.BENCH_FLOWS_20 ?? 1000) };
const HANDLER_RUNS = Number(process.env.BENCH_HANDLER_RUNS ?? 400);

const SUBJECT = { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10', nationality: 'GB', address: { street: 'St James Sq 12', locality: 'London', country: 'GB' } };
const CLAIMS = {
  given_name: { mandatory: true, value_type: 'string' },
  family_name: { mandatory: true, value_type: 'string' },
  birthdate: { value_type: 'date' },
  nationality: { value_type: 'string' },
  address: { street: { value_type: 'string' }, locality: { value_type: 'string' }, country: { value_type: 'string' } },
};
const SD_LIST = ['/given_name', '/family_name', '/birthdate', '/address/street'];

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: pct(s, 50), p99: pct(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length };
};

async function main() {
  const bench = await startBenchRuntime();
  const { rt } = bench;
  const call = (path: string, key: string, body: unknown) => bench.call('POST', path, key, body);
  const wallet = await bench.newWallet('bench-issuer');
  const key = wallet.key;
  const did = (await call('/api/v1/create-did', key, { method: 'key' })).did.did as string;
  const sd = await call('/api/v1/oid4vci/credentials-supported/sd-jwt', key, { id: 'Identity', vct: 'https://example.com/identity', claims: CLAIMS, sd_list: SD_LIST });
  // The issuer as offers name it: `<base>/oid4vci/<public_ref>`.
  const issuer = (await call('/api/v1/oid4vci/issue', key, { supported_cred_id: sd.supported_cred_id, credential_subject: SUBJECT, did })).offer.credential_issuer as string;
  const publicRef = issuer.split('/').at(-1)!;
  const offer = async () => {
    const o = await call('/api/v1/oid4vci/issue', key, { supported_cred_id: sd.supported_cred_id, credential_subject: SUBJECT, did });
    return o.offer.grants[PRE_AUTH]['pre-authorized_code'] as string;
  };
  const offers = async (n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i += 20) out.push(...(await Promise.all(Array.from({ length: Math.min(20, n - i) }, offer))));
    return out;
  };

  const token = async (code: string) => {
    const res = await fetch(`${issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }) });
    const body = (await res.json()) as Record<string, any>;
    if (!res.ok) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
    return body.access_token as string;
  };
  const nonce = async () => {
    const res = await fetch(`${issuer}/nonce`, { method: 'POST' });
    return ((await res.json()) as { c_nonce: string }).c_nonce;
  };

  /** One wallet's flow after the offer: token, nonce, credential. */
  const flow = async (w: SpecWallet, code: string) => {
    const accessToken = await token(code);
    const c = await nonce();
    const proof = w.makeProof({ aud: issuer, nonce: c });
    const res = await fetch(`${issuer}/credential`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ credential_configuration_id: 'Identity', proofs: { jwt: [proof] } }) });
    const body = (await res.json()) as Record<string, any>;
    if (!res.ok || !body.credentials?.[0]?.credential) throw new Error(`credential: ${res.status} ${JSON.stringify(body)}`);
  };

  console.log('\n### OID4VCI: the pre-authorized flow (token + nonce + credential), local runtime\n');
  console.log('SD-JWT VC with 5 claims (4 selectively disclosable, one nested), issuer did:key (Ed25519, local key manager), ES256 holder with `jwk` binding, no PIN, no DPoP.\n');
  console.log('| concurrent wallets | flows | flows/s | flow p50 ms | flow p99 ms |');
  console.log('|---|---|---|---|---|');
  // Warm-up: every code path, JIT and DynamoDB Local's caches.
  for (const code of await offers(30)) await flow(new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }), code);
  for (const concurrency of [1, 20] as const) {
    const codes = await offers(FLOWS[concurrency]);
    const wallets = Array.from({ length: concurrency }, () => new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }));
    const times: number[] = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      wallets.map(async (w) => {
        for (let i = next++; i < codes.length; i = next++) {
          const t = performance.now();
          await flow(w, codes[i]!);
          times.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const s = summary(times);
    console.log(`| ${concurrency} | ${times.length} | ${(times.length / seconds).toFixed(0)} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} |`);
  }

  // 2. The credential handler alone, next to the raw SD-JWT.
  const { handler } = (await import('../../functions/oid4vci-issuer/handler')) as { handler: (e: APIGatewayProxyEvent, c: Context) => Promise<APIGatewayProxyResult> };
  const route = '/oid4vci/{public_ref}/credential';
  const url = new URL(rt.url);
  const eventFor = (accessToken: string, body: string): APIGatewayProxyEvent =>
    ({
      resource: route,
      path: `${new URL(issuer).pathname}/credential`,
      httpMethod: 'POST',
      headers: { host: url.host, authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: { public_ref: publicRef },
      stageVariables: null,
      body,
      isBase64Encoded: false,
      requestContext: { domainName: url.host, stage: 'local', requestId: randomUUID(), path: route, httpMethod: 'POST', resourcePath: route, identity: { sourceIp: '127.0.0.1' } },
    }) as unknown as APIGatewayProxyEvent;
  const ctx = lambdaContext('bench-oid4vci-issuer', 30_000);
  const holder = new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' });
  const prepared: { event: APIGatewayProxyEvent }[] = [];
  for (const code of await offers(HANDLER_RUNS)) {
    const accessToken = await token(code);
    const body = JSON.stringify({ credential_configuration_id: 'Identity', proofs: { jwt: [holder.makeProof({ aud: issuer, nonce: await nonce() })] } });
    prepared.push({ event: eventFor(accessToken, body) });
  }
  const handlerTimes: number[] = [];
  for (const { event } of prepared) {
    const t = performance.now();
    const res = await handler(event, ctx);
    handlerTimes.push(performance.now() - t);
    if (res.statusCode !== 200) throw new Error(`handler: ${res.statusCode} ${res.body}`);
  }

  // The raw SD-JWT: @sd-jwt/core with node's crypto on an Ed25519 key, the same payload and frame.
  const { privateKey } = generateKeyPairSync('ed25519');
  const hasher = (data: string | ArrayBuffer) => new Uint8Array(createHash('sha256').update(typeof data === 'string' ? data : Buffer.from(data)).digest());
  const sdjwt = new SDJwtInstance<Record<string, unknown>>({
    signer: async (input: string) => sign(null, Buffer.from(input), privateKey).toString('base64url'),
    signAlg: 'EdDSA',
    hasher,
    hashAlg: 'sha-256',
    saltGenerator: () => randomBytes(16).toString('base64url'),
  });
  const holderJwk = holder.holderKeys[0]!.publicJwk;
  const rawPayload = (): Record<string, unknown> => {
    const iat = Math.floor(Date.now() / 1000);
    return { ...SUBJECT, iss: did, iat, nbf: iat, exp: iat + 31_536_000, vct: 'https://example.com/identity', cnf: { jwk: holderJwk } };
  };
  const frame = disclosureFrame(SD_LIST, SUBJECT);
  for (let i = 0; i < 200; i++) await sdjwt.issue(rawPayload(), frame, { header: { typ: 'vc+sd-jwt', kid: `${did}#x` } });
  const rawTimes: number[] = [];
  for (let i = 0; i < HANDLER_RUNS; i++) {
    const t = performance.now();
    await sdjwt.issue(rawPayload(), frame, { header: { typ: 'vc+sd-jwt', kid: `${did}#x` } });
    rawTimes.push(performance.now() - t);
  }
  const h = summary(handlerTimes);
  const r = summary(rawTimes);
  console.log('\n### OID4VCI: the credential endpoint handler vs. the raw SD-JWT, same run\n');
  console.log(`${HANDLER_RUNS} requests, each with a fresh token and nonce, handler called in-process (no HTTP); raw: \`SDJwtInstance.issue\` with node:crypto Ed25519.\n`);
  console.log('| | p50 ms | p99 ms | mean ms |');
  console.log('|---|---|---|---|');
  console.log(`| credential handler | ${h.p50.toFixed(2)} | ${h.p99.toFixed(2)} | ${h.mean.toFixed(2)} |`);
  console.log(`| raw SD-JWT (@sd-jwt/core) | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.mean.toFixed(2)} |`);
  console.log(`| ratio handler / raw (p50) | ${(h.p50 / r.p50).toFixed(1)}× | | |`);
  await rt.stop();
}

runBench(main);
