/**
 * Part of `npm run bench` (see run.ts): the OID4VP verifier's response endpoint, for docs/benchmarks.md.
 *
 * 1. Throughput: prepared `direct_post` answers (DCQL, one SD-JWT VC with a KB-JWT each) POSTed to
 *    `/oid4vp/{wallet}/response/{presentation_id}` through the local runtime at 1 and 10 concurrent wallets.
 *    Requests are created, their request objects fetched and the presentations signed beforehand
 *    (untimed); every answer must be 200 and every record `presentation-valid`.
 * 2. The response handler's own time (called in-process with the gateway's event, no HTTP) next to
 *    the raw cost of verifying the same presentation with `@sd-jwt/core`, and our own pure verifier
 *    (`verifySdJwtPresentation`, no store) in between, all in the same run.
 * The main figures use a credential without status; a second configuration bound to a status list
 * definition shows what the status check adds (the list is fetched once, then cached).
 */
import { createHash, createPublicKey, randomUUID, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_TABLE_NAME } from '../../infra/local/runtime';
import type { JWK } from 'jose';
import { SDJwtInstance } from '@sd-jwt/core';
import { parseOpenid4vpAuthorizationResponse } from '@openid4vc/openid4vp';
import { lambdaContext } from '../../infra/local/lambda-context';
import { IDENTITY_SUBJECT, IDENTITY_VCT, identityConfiguration } from '../helpers/identity-credential';
import { runBench, startBenchRuntime } from './harness';
import { oid4vcCallbacks } from '../../lib/oid4vc/callbacks';
import { VERIFICATION_LIMITS } from '../../lib/oid4vp/protocol/verifier';
import { outlineToken } from '../../lib/oid4vp/verification/outline';
import { verifySdJwtPresentation } from '../../lib/oid4vp/verification/sd-jwt';
import { trustOf, trustPolicy } from '../../lib/oid4vp/verification/trust';
import type { StatusChecker, VerificationContext } from '../../lib/oid4vp/verification/types';
import { SpecWallet, jwkOfDidKey, type HolderKey } from '../helpers/spec-wallet';
import { answerDcql, postDirectPost, resolveAuthorizationRequest, type DcqlQuery, type RequestObject } from '../helpers/spec-vp-wallet';

const RUNS = { 1: Number(process.env.BENCH_VP_1 ?? 200), 10: Number(process.env.BENCH_VP_10 ?? 500) };
const HANDLER_RUNS = Number(process.env.BENCH_VP_HANDLER_RUNS ?? 300);
const RAW_RUNS = Number(process.env.BENCH_VP_RAW_RUNS ?? 3000);
const WARMUP = 30;

const VCT = IDENTITY_VCT;
const SUBJECT = IDENTITY_SUBJECT;
const FORMATS = { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256', 'EdDSA'], 'kb-jwt_alg_values': ['ES256', 'EdDSA'] } };
const dcqlQuery = (vct: string): DcqlQuery => ({ credentials: [{ id: 'identity', format: 'dc+sd-jwt', meta: { vct_values: [vct] }, claims: [{ path: ['given_name'] }, { path: ['address', 'locality'] }] }] });

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: pct(s, 50), p95: pct(s, 95), p99: pct(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length };
};
const f2 = (x: number) => x.toFixed(2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One answer ready to POST: where, the form, and what the raw verifier needs. */
interface Prepared {
  presentationId: string;
  responseUri: string;
  fields: Record<string, string>;
  presentation: string;
  nonce: string;
  request: RequestObject;
}

async function main() {
  const { rt, call, walletWithPublicDid } = await startBenchRuntime();

  // Issuer (did:key P-256) and two dc+sd-jwt configurations: one plain, one bound to a status list definition.
  const issuer = await walletWithPublicDid('bench-vp-issuer', { method: 'key', options: { key_type: 'p256' } });
  const configuration = async (id: string, vct: string) =>
    (await call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', issuer.key, identityConfiguration(id, vct))).supported_cred_id as string;
  const plainVct = VCT;
  const statusVct = `${VCT}_status`;
  const plain = await configuration('Identity_dc', plainVct);
  const withStatus = await configuration('Identity_dc_status', statusVct);
  await call('POST', '/api/v1/status-list/defs', issuer.key, { supported_cred_id: withStatus, issuer_did: issuer.did });

  // One credential each, through the real OID4VCI flow (the spec wallet).
  const receive = async (supported: string) => {
    const offer = await call('POST', '/api/v1/oid4vci/issue', issuer.key, { supported_cred_id: supported, credential_subject: SUBJECT });
    const got = await new SpecWallet({ alg: 'ES256', binding: 'jwk', shape: 'v1' }).receive(offer.credential_offer_uri);
    return { credential: got.credentials[0]!, holderKey: got.holderKeys[0]! };
  };
  const plainCred = await receive(plain);
  const statusCred = await receive(withStatus);
  const payloadOf = (sdJwt: string) => JSON.parse(Buffer.from(sdJwt.split('~')[0]!.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, any>;
  if (payloadOf(plainCred.credential).status !== undefined) throw new Error('the plain credential has a status');
  const statusUri = payloadOf(statusCred.credential).status?.status_list?.uri as string | undefined;
  if (!statusUri) throw new Error('the status-bound credential has no status_list');
  // The list is published in the background: wait until a verifier can fetch it.
  for (let t0 = performance.now(); (await fetch(statusUri)).status !== 200; await sleep(100)) {
    if (performance.now() - t0 > 30_000) throw new Error(`${statusUri} not published within 30 s`);
  }

  const verifier = await walletWithPublicDid('bench-vp-verifier', { method: 'key', options: { key_type: 'ed25519' } });
  // The issuer is another tenant: the verifier lists it, as any relying party must (docs/oid4vp.md, "Which issuers are trusted").
  await call('PUT', '/api/v1/settings/trusted-issuers', verifier.key, { issuers: [issuer.did] });

  /** n requests created, their request objects fetched (and verified by the wallet), answers signed: all untimed. */
  const prepare = async (n: number, vct: string, cred: { credential: string; holderKey: HolderKey }): Promise<Prepared[]> => {
    const one = async (): Promise<Prepared> => {
      const created = await call('POST', '/api/v1/oid4vp/request', verifier.key, { dcql_query: dcqlQuery(vct), vp_formats: FORMATS });
      const { payload } = await resolveAuthorizationRequest(created.request_uri);
      const answer = await answerDcql(payload, { identity: cred.credential }, cred.holderKey, { dryRun: true });
      const presentation = (JSON.parse(answer.fields.vp_token!) as Record<string, string[]>).identity![0]!;
      return { presentationId: created.presentation.presentation_id, responseUri: payload.response_uri!, fields: answer.fields, presentation, nonce: payload.nonce, request: payload };
    };
    const out: Prepared[] = [];
    for (let i = 0; i < n; i += 10) out.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, one))));
    return out;
  };
  const expectValid = async (items: Prepared[]) => {
    for (let i = 0; i < items.length; i += 10) {
      await Promise.all(
        items.slice(i, i + 10).map(async (p) => {
          const r = await call('GET', `/api/v1/oid4vp/presentations/${p.presentationId}`, verifier.key);
          if (r.state !== 'presentation-valid' || r.verified !== true) throw new Error(`presentation ${p.presentationId}: ${r.state} ${JSON.stringify(r.errors)}`);
        }),
      );
    }
  };
  const post = async (p: Prepared) => {
    const res = await postDirectPost(p.responseUri, p.fields);
    if (res.status !== 200) throw new Error(`response: ${res.status} ${JSON.stringify(res.body)}`);
  };
  /** POSTs every prepared answer on `workers` concurrent wallets. */
  const run = async (items: Prepared[], workers: number) => {
    const times: number[] = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = next++; i < items.length; i = next++) {
          const t = performance.now();
          await post(items[i]!);
          times.push(performance.now() - t);
        }
      }),
    );
    return { times, seconds: (performance.now() - t0) / 1000 };
  };

  // Warm-up (JIT, caches, the status list's first fetch), then the measured runs; each set prepared just before its run so KB-JWT iat stays fresh.
  for (const cred of [[plainVct, plainCred], [statusVct, statusCred]] as const) {
    const warm = await prepare(WARMUP, cred[0], cred[1]);
    for (const p of warm) await post(p);
    await expectValid(warm);
  }
  console.log('\n### OID4VP: the response endpoint (direct_post), local runtime\n');
  console.log('DCQL request for one dc+sd-jwt credential (2 of its 5 selectively disclosable claims, one nested), issuer did:key P-256 (ES256), ES256 holder with `jwk` binding, verifier did:key Ed25519. Requests made and request objects fetched beforehand (untimed); every answer 200 and every record `presentation-valid`. Each row: two halves run in ABBA order with the other credential.\n');
  console.log('| credential | concurrent wallets | presentations | presentations/s | p50 ms | p95 ms | p99 ms |');
  console.log('|---|---|---|---|---|---|---|');
  const endpointP50: Record<string, number> = {};
  const variants = { A: ['no status', plainVct, plainCred], B: ['IETF status list (cached)', statusVct, statusCred] } as const;
  for (const c of [1, 10] as const) {
    // ABBA halves, so drift (JIT, table growth, the other load on the machine) falls on both alike.
    const acc = { A: { times: [] as number[], seconds: 0 }, B: { times: [] as number[], seconds: 0 } };
    for (const v of ['A', 'B', 'B', 'A'] as const) {
      const [, vct, cred] = variants[v];
      const items = await prepare(Math.ceil(RUNS[c] / 2), vct, cred);
      const r = await run(items, c);
      await expectValid(items);
      acc[v].times.push(...r.times);
      acc[v].seconds += r.seconds;
    }
    for (const v of ['A', 'B'] as const) {
      const label = variants[v][0];
      const s = summary(acc[v].times);
      if (c === 1) endpointP50[label] = s.p50;
      console.log(`| ${label} | ${c} | ${acc[v].times.length} | ${(acc[v].times.length / acc[v].seconds).toFixed(0)} | ${f2(s.p50)} | ${f2(s.p95)} | ${f2(s.p99)} |`);
    }
  }

  // 2. The response handler in-process (no HTTP, no gateway), plain credential.
  const { handler } = (await import('../../functions/oid4vp-verifier/handler')) as { handler: (e: APIGatewayProxyEvent, c: Context) => Promise<APIGatewayProxyResult> };
  const route = '/oid4vp/{public_ref}/response/{presentation_id}';
  const url = new URL(rt.url);
  const eventFor = (p: Prepared): APIGatewayProxyEvent =>
    ({
      resource: route,
      path: new URL(p.responseUri).pathname,
      httpMethod: 'POST',
      headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      // The response URI the request object named: /oid4vp/<public_ref>/response/<presentation_id>.
      pathParameters: { public_ref: new URL(p.responseUri).pathname.split('/')[2]!, presentation_id: p.presentationId },
      stageVariables: null,
      body: new URLSearchParams(p.fields).toString(),
      isBase64Encoded: false,
      requestContext: { domainName: url.host, stage: 'local', requestId: randomUUID(), path: route, httpMethod: 'POST', resourcePath: route, identity: { sourceIp: '127.0.0.1' } },
    }) as unknown as APIGatewayProxyEvent;
  const ctxLambda = lambdaContext('bench-oid4vp-verifier', 30_000);
  const handlerSet = await prepare(HANDLER_RUNS + WARMUP, plainVct, plainCred);
  const handlerTimes: number[] = [];
  for (const [i, p] of handlerSet.entries()) {
    const t = performance.now();
    const res = await handler(eventFor(p), ctxLambda);
    if (i >= WARMUP) handlerTimes.push(performance.now() - t);
    if (res.statusCode !== 200) throw new Error(`handler: ${res.statusCode} ${res.body}`);
  }
  await expectValid(handlerSet);

  // Our pure verifier on the same presentations: issuer key handed in (no store read), no status.
  const issuerJwk = jwkOfDidKey(issuer.did) as JWK;
  const noStatus: StatusChecker = {
    ietf: async () => ({ value: 0, meaning: 'valid' }),
    w3c: async () => ({ value: 0, meaning: 'valid' }),
  };
  const audience = `decentralized_identifier:${verifier.did}`;
  const ours = async (p: Prepared) => {
    const ctx: VerificationContext = { audiences: [audience], nonce: p.nonce, now: new Date(), maxIatSkewSeconds: 300, resolveIssuerKey: async () => issuerJwk, status: noStatus };
    const v = await verifySdJwtPresentation(p.presentation, ctx, { requireKeyBinding: true });
    if ((v.claims as any).address?.locality !== 'Köln') throw new Error('ours: claims not disclosed');
  };

  // Raw: @sd-jwt/core with node:crypto ES256; keys imported per call, as a verifier does for each credential's cnf.
  const es256 = (jwk: JWK) => createPublicKey({ key: jwk as any, format: 'jwk' });
  const check = (key: KeyObject, data: string, sig: string) => cryptoVerify('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url'));
  const sdjwt = new SDJwtInstance<Record<string, unknown>>({
    verifier: async (data, sig) => check(es256(issuerJwk), data, sig),
    kbVerifier: async (data, sig, payload) => check(es256((payload as any).cnf.jwk), data, sig),
    hasher: (data: string | ArrayBuffer) => new Uint8Array(createHash('sha256').update(typeof data === 'string' ? data : Buffer.from(data)).digest()),
    hashAlg: 'sha-256',
  });
  const raw = async (p: Prepared) => {
    const r = await sdjwt.verify(p.presentation, { keyBindingNonce: p.nonce, requiredClaimKeys: ['given_name', 'address'] });
    if (!r.kb) throw new Error('raw: no key binding verified');
  };

  // What the handler runs before ours: the library's parse of the form against the request (here the request object as the wallet got it).
  const parse = async (p: Prepared) => {
    const parsed = await parseOpenid4vpAuthorizationResponse({
      authorizationResponse: { ...p.fields },
      authorizationRequestPayload: p.request as never,
      callbacks: { verifyJwt: oid4vcCallbacks().verifyJwt, decryptJwe: async () => { throw new Error('not encrypted'); } },
    });
    if (parsed.type !== 'dcql') throw new Error('parse: not a DCQL answer');
  };

  const timeEach = async (f: (p: Prepared) => Promise<void>) => {
    for (let i = 0; i < 300; i++) await f(handlerSet[i % handlerSet.length]!);
    const times: number[] = [];
    for (let i = 0; i < RAW_RUNS; i++) {
      const p = handlerSet[i % handlerSet.length]!;
      const t = performance.now();
      await f(p);
      times.push(performance.now() - t);
    }
    return summary(times);
  };
  // What the response endpoint added before verifying: the token's outline, the trust decision (the setting already read,
  // alongside the record) and the deadline's timer and signal. The setting's read itself is in the handler's figure.
  const policy = trustPolicy([issuer.did], async () => false);
  const checks = async (p: Prepared) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), VERIFICATION_LIMITS.deadlineMs);
    const [c] = outlineToken(p.presentation, 'sd-jwt');
    if ((await trustOf(c!.issuer, undefined, policy)) !== 'trusted_issuers_setting') throw new Error('checks: not trusted');
    clearTimeout(timer);
  };

  // The one read trust adds to the path: the setting, read beside the presentation's own (consistent) read.
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: rt.endpoints.dynamodb }));
  const get = (SK: string, consistent: boolean) => ddb.send(new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: { PK: `W#${verifier.walletId}`, SK }, ConsistentRead: consistent }));
  const recordAlone = async (p: Prepared) => void (await get(`VPX#${p.presentationId}`, true));
  const recordAndSetting = async (p: Prepared) => void (await Promise.all([get(`VPX#${p.presentationId}`, true), get('SETTINGS#TRUSTED_ISSUERS', false)]));
  const reads: Record<'alone' | 'beside', number[]> = { alone: [], beside: [] };
  for (const half of ['alone', 'beside', 'beside', 'alone'] as const) {
    const f = half === 'alone' ? recordAlone : recordAndSetting;
    for (let i = 0; i < 500; i++) {
      const p = handlerSet[i % handlerSet.length]!;
      const t = performance.now();
      await f(p);
      if (i >= 50) reads[half].push(performance.now() - t);
    }
  }
  const aloneS = summary(reads.alone);
  const besideS = summary(reads.beside);

  const rawS = await timeEach(raw);
  const oursS = await timeEach(ours);
  const parseS = await timeEach(parse);
  const checksS = await timeEach(checks);
  const h = summary(handlerTimes);
  const e = endpointP50['no status']!;
  console.log('\n### OID4VP: the response handler vs. the raw SD-JWT verification, same run\n');
  console.log(`Same presentation shape (plain credential). Handler: the Lambda handler the runtime serves, called in-process with the gateway's event (no HTTP), ${HANDLER_RUNS} answers. Ours: \`verifySdJwtPresentation\` with the issuer key handed in and a stub status checker (no store, no parsing of the form, no DCQL matching). Trust and bounds: what the endpoint does before verifying (the token's outline, the trust decision from the loaded setting, the deadline's timer). Store: the presentation's strongly consistent GetItem alone, and with the setting's GetItem beside it (as the endpoint reads them), 900 each in ABBA halves. Raw: \`SDJwtInstance.verify(presentation, { keyBindingNonce, requiredClaimKeys })\` of \`@sd-jwt/core\` with node:crypto ES256, ${RAW_RUNS} iterations.\n`);
  console.log('| | p50 ms | p95 ms | p99 ms | mean ms | p50 / raw p50 |');
  console.log('|---|---|---|---|---|---|');
  console.log(`| response endpoint over HTTP, 1 wallet (above) | ${f2(e)} | | | | ${(e / rawS.p50).toFixed(2)}× |`);
  console.log(`| response handler, in-process | ${f2(h.p50)} | ${f2(h.p95)} | ${f2(h.p99)} | ${f2(h.mean)} | ${(h.p50 / rawS.p50).toFixed(2)}× |`);
  console.log(`| ours: \`verifySdJwtPresentation\` alone | ${f2(oursS.p50)} | ${f2(oursS.p95)} | ${f2(oursS.p99)} | ${f2(oursS.mean)} | ${(oursS.p50 / rawS.p50).toFixed(2)}× |`);
  console.log(`| trust and bounds: outline, trust decision, deadline timer | ${f2(checksS.p50)} | ${f2(checksS.p95)} | ${f2(checksS.p99)} | ${f2(checksS.mean)} | ${(checksS.p50 / rawS.p50).toFixed(2)}× |`);
  console.log(`| store: the presentation's read alone (DynamoDB Local) | ${f2(aloneS.p50)} | ${f2(aloneS.p95)} | ${f2(aloneS.p99)} | ${f2(aloneS.mean)} | |`);
  console.log(`| store: the same read with the trusted-issuers setting read beside it | ${f2(besideS.p50)} | ${f2(besideS.p95)} | ${f2(besideS.p99)} | ${f2(besideS.mean)} | |`);
  console.log(`| library: \`parseOpenid4vpAuthorizationResponse\` of the form | ${f2(parseS.p50)} | ${f2(parseS.p95)} | ${f2(parseS.p99)} | ${f2(parseS.mean)} | ${(parseS.p50 / rawS.p50).toFixed(2)}× |`);
  console.log(`| raw: \`@sd-jwt/core\` verify | ${f2(rawS.p50)} | ${f2(rawS.p95)} | ${f2(rawS.p99)} | ${f2(rawS.mean)} | 1.00× |`);
  await rt.stop();
}

runBench(main);
