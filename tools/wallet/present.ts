import { randomBytes, randomUUID } from 'node:crypto';
import { PEX } from '@animo-id/pex';
import { Openid4vpClient, type ResolvedOpenid4vpAuthorizationRequest } from '@openid4vc/openid4vp';
import { SDJwtInstance } from '@sd-jwt/core';
import { CompactEncrypt, importJWK, type JWK } from 'jose';
import { DcqlQuery, type DcqlCredential } from 'dcql';
import { parseJsonPath, type PathSegment } from '../../lib/oid4vp/query/jsonpath';
import { HolderCallbacks } from './callbacks';
import { libraryError, type WalletContext } from './context';
import { decodedPayload, dottedToPointer, hasher } from './credentials';
import { messageOf, WalletError } from './errors';
import { didUrlOf, sdJwtSigner, signJwt, type StoredKey } from './keys';
import type { StoredCredential } from './store';

export interface PresentOptions {
  /** Credential ids the person chose (`--credential`); each answers the query it matches. */
  readonly credentials?: readonly string[];
}

export interface PresentedCredential {
  /** The DCQL credential query id or input descriptor id it answers. */
  readonly query_id: string;
  readonly credential_id: string;
  readonly format: string;
  /** JSON pointers of the selectively disclosable claims disclosed (empty for a JWT VC: it has none). */
  readonly disclosed: string[];
}

export interface PresentResult {
  /** The verifier's client id, as the wallet addressed it (KB-JWT / VP `aud`). */
  readonly client_id: string;
  readonly response_uri: string;
  readonly query: 'dcql' | 'presentation_definition';
  readonly presented: PresentedCredential[];
  /** True when the verifier answered 2xx. */
  readonly accepted: boolean;
  readonly verifier: { readonly status: number; readonly body: unknown };
}

type Json = Record<string, unknown>;
type ClaimPath = readonly (string | number | null)[];
/** @sd-jwt's presentation frame: `true` discloses a claim, an object descends into it. */
type Frame = { [k: string]: boolean | Frame };

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Held {
  readonly stored: StoredCredential;
  readonly payload: Json;
}

/** Adds a claim path to a presentation frame (a `null` step means every element of the array there). */
function addToFrame(frame: Frame, path: ClaimPath, value: unknown): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (head === null) {
    if (Array.isArray(value)) value.forEach((_, i) => addToFrame(frame, [i, ...rest], value));
    return;
  }
  const key = String(head);
  if (frame[key] === true) return;
  if (rest.length === 0) {
    frame[key] = true;
    return;
  }
  const child = isObject(frame[key]) ? (frame[key] as Frame) : {};
  frame[key] = child;
  const inner = Array.isArray(value) ? value[head as number] : isObject(value) ? value[key] : undefined;
  addToFrame(child, rest, inner);
}

/** The value at a claim path, or undefined when the credential has none there. */
function valueAt(claims: unknown, path: readonly PathSegment[]): unknown {
  let cur: unknown = claims;
  for (const seg of path) {
    if ('key' in seg) cur = isObject(cur) ? cur[seg.key] : undefined;
    else if ('index' in seg) cur = Array.isArray(cur) ? cur[seg.index] : undefined;
    else return Array.isArray(cur) || isObject(cur) ? cur : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * Which of several matching credentials answers a query: the one the person named with
 * --credential, else the newest (ids are ULIDs: the greatest is the last received) — said aloud.
 */
function pick(ctx: WalletContext, queryId: string, candidates: Held[], chosen: readonly string[], used: Set<string>): Held {
  const named = candidates.find((c) => chosen.includes(c.stored.id));
  if (named) {
    used.add(named.stored.id);
    return named;
  }
  const newest = [...candidates].sort((a, b) => (a.stored.id < b.stored.id ? 1 : -1))[0]!;
  if (candidates.length > 1) ctx.log(`${candidates.length} credentials answer '${queryId}' (${candidates.map((c) => c.stored.id).join(', ')}): picked ${newest.stored.id}, the newest; choose with --credential`);
  return newest;
}

/** The DCQL view of a held credential (OpenID4VP 1.0 §6 and appendix B). */
function dcqlCredential(h: Held): DcqlCredential {
  if (h.stored.format === 'jwt_vc_json') {
    // W3C VC claim paths start at the VC (credentialSubject…), not at the JWT around it.
    const { vc, ...rest } = h.payload;
    const root = isObject(vc) ? { ...rest, ...vc } : rest;
    const type = Array.isArray(root.type) ? root.type.filter((t): t is string => typeof t === 'string') : [];
    return { credential_format: 'jwt_vc_json', type, claims: root as never, cryptographic_holder_binding: true };
  }
  // vc+sd-jwt is the pre-1.0 media type of the same SD-JWT VC: it answers a dc+sd-jwt query.
  return { credential_format: 'dc+sd-jwt', vct: String(h.payload.vct ?? ''), claims: h.payload as never, cryptographic_holder_binding: true };
}

interface Selection {
  readonly queryId: string;
  readonly held: Held;
  /** What to disclose (SD-JWT); ignored for a JWT VC. */
  readonly frame: Frame;
}

function selectDcql(ctx: WalletContext, rawQuery: unknown, held: Held[], chosen: readonly string[], used: Set<string>): Selection[] {
  let query: DcqlQuery;
  try {
    query = DcqlQuery.parse(rawQuery as never);
    DcqlQuery.validate(query);
  } catch (err) {
    throw new WalletError('invalid_request', `the request's DCQL query is not valid: ${messageOf(err)}`);
  }
  const result = DcqlQuery.query(query, held.map(dcqlCredential));
  const candidatesOf = (id: string) => {
    const match = result.credential_matches[id];
    return match?.success ? match.valid_credentials.map((v) => ({ held: held[v.input_credential_index]!, match: v })) : [];
  };

  // Answer every credential query, or with credential_sets the first satisfiable option of each required set.
  let ids: string[];
  if (query.credential_sets) {
    ids = [];
    for (const [i, set] of query.credential_sets.entries()) {
      if (set.required === false) continue;
      const option = set.options.find((o) => o.every((id) => candidatesOf(id).length > 0));
      if (!option) throw new WalletError('no_matching_credential', `no held credentials satisfy credential_sets[${i}] (options ${set.options.map((o) => `[${o.join(', ')}]`).join(' | ')})`);
      ids.push(...option.filter((id) => !ids.includes(id)));
    }
  } else {
    ids = query.credentials.map((c) => c.id);
  }

  return ids.map((id) => {
    const candidates = candidatesOf(id);
    const cq = query.credentials.find((c) => c.id === id)!;
    if (candidates.length === 0) {
      const wanted = cq.format === 'jwt_vc_json' ? `jwt_vc_json ${JSON.stringify(cq.meta && 'type_values' in cq.meta ? cq.meta.type_values : [])}` : `${cq.format} ${JSON.stringify(cq.meta && 'vct_values' in cq.meta ? cq.meta.vct_values : [])}`;
      throw new WalletError('no_matching_credential', `no held credential answers '${id}' (${wanted} with ${cq.claims?.length ?? 0} claim(s)); \`list\` shows what the wallet holds`);
    }
    const chosenHeld = pick(ctx, id, candidates.map((c) => c.held), chosen, used);
    const match = candidates.find((c) => c.held === chosenHeld)!.match;
    // The first claim set it satisfies (the query lists them in the verifier's order of preference).
    const claimSet = match.claims.success ? match.claims.valid_claim_sets[0] : undefined;
    const frame: Frame = {};
    const claims = (cq.claims ?? []) as readonly { path: ClaimPath }[];
    for (const k of claimSet?.valid_claim_indexes ?? []) addToFrame(frame, claims[k]!.path, chosenHeld.payload);
    return { queryId: id, held: chosenHeld, frame };
  });
}

/**
 * pex names a JWT-encoded VC's format `jwt_vc` and would not match a definition asking for
 * `jwt_vc_json`: the same credentials (VC-JWT) under OpenID4VP's name. For matching only, a format
 * restriction naming one also names the other; the submission keeps the definition's own name.
 */
function widenJwtFormats(definition: Json): Json {
  const widen = (format: unknown) => {
    if (!isObject(format)) return format;
    const out: Json = { ...format };
    for (const [a, b] of [['jwt_vc_json', 'jwt_vc'], ['jwt_vp_json', 'jwt_vp']] as const) {
      if (a in out && !(b in out)) out[b] = out[a];
    }
    return out;
  };
  const descriptors = (definition.input_descriptors as Json[]).map((d) => ('format' in d ? { ...d, format: widen(d.format) } : d));
  return { ...definition, ...('format' in definition ? { format: widen(definition.format) } : {}), input_descriptors: descriptors };
}

/** PE v2 (draft-era requests): each input descriptor evaluated by pex against each held credential. */
function selectPex(ctx: WalletContext, definition: Json, held: Held[], chosen: readonly string[], used: Set<string>): Selection[] {
  const pex = new PEX({ hasher: (data, alg) => hasher(data, alg) });
  const descriptors = Array.isArray(definition.input_descriptors) ? (definition.input_descriptors as Json[]) : [];
  if (definition.submission_requirements) throw new WalletError('unsupported', 'the definition has submission_requirements, which the wallet does not evaluate');
  return descriptors.map((descriptor) => {
    const id = String(descriptor.id);
    const single = widenJwtFormats({ ...definition, input_descriptors: [descriptor] }) as never;
    const reasons = new Set<string>();
    const candidates = held.filter((h) => {
      try {
        const evaluation = pex.evaluateCredentials(single, [h.stored.credential]);
        for (const e of evaluation.errors ?? []) reasons.add(`${e.tag}: ${e.message}`);
        return evaluation.areRequiredCredentialsPresent !== 'error';
      } catch (err) {
        reasons.add(messageOf(err));
        return false;
      }
    });
    if (candidates.length === 0) {
      const why = [...reasons].slice(0, 3).join('; ');
      throw new WalletError('no_matching_credential', `no held credential satisfies input descriptor '${id}'${why ? ` (${why})` : ''}; \`list\` shows what the wallet holds`);
    }
    const chosenHeld = pick(ctx, id, candidates, chosen, used);
    // Disclose what the fields name (the first path of each that the credential has), nothing optional.
    const frame: Frame = {};
    const constraints = isObject(descriptor.constraints) ? descriptor.constraints : {};
    const fields = Array.isArray(constraints.fields) ? (constraints.fields as Json[]) : [];
    for (const field of fields) {
      if (field.optional === true || !Array.isArray(field.path)) continue;
      for (const p of field.path as string[]) {
        const parsed = parseJsonPath(p);
        if (!parsed.ok || valueAt(chosenHeld.payload, parsed.segments) === undefined) continue;
        addToFrame(frame, parsed.segments.map((s) => ('key' in s ? s.key : 'index' in s ? s.index : null)), chosenHeld.payload);
        break;
      }
    }
    return { queryId: id, held: chosenHeld, frame };
  });
}

/** What the wallet encrypts with for direct_post.jwt: ECDH-ES on the verifier's key, the AES-GCM (HAIP) and CBC-HMAC encodings; responses are not signed. */
const jarmOptions = () => ({
  // apu: a fresh wallet nonce per response (OpenID4VP 1.0 §8.3).
  encryption: { nonce: randomBytes(16).toString('base64url') },
  serverMetadata: {
    authorization_signing_alg_values_supported: [],
    authorization_encryption_alg_values_supported: ['ECDH-ES'],
    authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM', 'A128CBC-HS256'],
  },
});

interface Built {
  readonly presentation: string;
  readonly disclosed: string[];
  readonly descriptorFormat: string;
}

/** One presentation: an SD-JWT with the framed disclosures and a KB-JWT, or a VP JWT around the VC-JWT. */
async function build(ctx: WalletContext, s: Selection, aud: string, nonce: string, peFormats: readonly string[]): Promise<Built> {
  const { stored } = s.held;
  const key: StoredKey = await ctx.store.key(stored.key_id);
  const iat = Math.floor(Date.now() / 1000);
  if (stored.format === 'jwt_vc_json') {
    // The VP's holder is the DID the VC names; a VC bound to a plain key (cnf.jwk) is presented under that key's did:jwk.
    const didUrl = stored.holder_did_url ?? didUrlOf(key, 'did:jwk');
    const holder = didUrl.split('#')[0]!;
    const vp = {
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      type: ['VerifiablePresentation'],
      holder,
      verifiableCredential: [stored.credential],
    };
    const presentation = await signJwt(key, { alg: key.alg, typ: 'JWT', kid: didUrl }, { iss: holder, aud, nonce, iat, jti: `urn:uuid:${randomUUID()}`, vp });
    return { presentation, disclosed: [], descriptorFormat: peFormats.includes('jwt_vp') && !peFormats.includes('jwt_vp_json') ? 'jwt_vp' : 'jwt_vp_json' };
  }
  const sdjwt = new SDJwtInstance({ hasher, kbSigner: await sdJwtSigner(key), kbSignAlg: key.alg });
  const presentation = await sdjwt.present(stored.credential, s.frame as never, { kb: { payload: { iat, aud, nonce } } });
  const disclosed = (await sdjwt.presentableKeys(presentation)).map(dottedToPointer).sort();
  const descriptorFormat = peFormats.find((f) => f === 'vc+sd-jwt' || f === 'dc+sd-jwt') ?? stored.format;
  return { presentation, disclosed, descriptorFormat };
}

function formatsNamed(definition: Json, descriptorId: string): string[] {
  const descriptor = (definition.input_descriptors as Json[]).find((d) => d.id === descriptorId);
  const own = isObject(descriptor?.format) ? Object.keys(descriptor.format) : [];
  return own.length ? own : isObject(definition.format) ? Object.keys(definition.format) : [];
}

/** OpenID4VP: resolve and check the request, match held credentials, disclose what is asked, post the answer. */
export async function present(ctx: WalletContext, requestUri: string, opts: PresentOptions = {}): Promise<PresentResult> {
  const callbacks = new HolderCallbacks();
  const client = new Openid4vpClient({
    callbacks: {
      ...callbacks.context(),
      // direct_post.jwt (OpenID4VP 1.0 §8.3): the response encrypted to the verifier's key from client_metadata.
      encryptJwe: async (encryptor, data) => {
        const header = { alg: encryptor.alg, enc: encryptor.enc, ...(encryptor.publicJwk.kid ? { kid: encryptor.publicJwk.kid } : {}) };
        const jwe = new CompactEncrypt(new TextEncoder().encode(data)).setProtectedHeader(header);
        if (encryptor.apu || encryptor.apv) {
          jwe.setKeyManagementParameters({
            ...(encryptor.apu ? { apu: Buffer.from(encryptor.apu, 'base64url') } : {}),
            ...(encryptor.apv ? { apv: Buffer.from(encryptor.apv, 'base64url') } : {}),
          });
        }
        return { jwe: await jwe.encrypt(await importJWK(encryptor.publicJwk as JWK, encryptor.alg)), encryptionJwk: encryptor.publicJwk };
      },
      decryptJwe: () => {
        throw new WalletError('unsupported', 'encrypted request objects are not supported by the wallet');
      },
    },
  });

  const chosen = [...new Set(opts.credentials ?? [])];
  // Unknown ids are an error before anything is fetched (the request object can be fetched only once).
  const chosenStored = await Promise.all(chosen.map((id) => ctx.store.credential(id)));
  const chosenIds = chosenStored.map((c) => c.id);

  let params;
  try {
    params = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: requestUri.trim() }).params;
  } catch (err) {
    throw libraryError(err, 'not an OpenID4VP request (expected openid://?client_id=…&request_uri=…)', 'invalid_request');
  }
  let resolved: ResolvedOpenid4vpAuthorizationRequest;
  try {
    resolved = await client.resolveOpenId4vpAuthorizationRequest({ authorizationRequestPayload: params as never });
  } catch (err) {
    throw libraryError(err, 'the request could not be resolved', 'invalid_request');
  }
  const { client: verifier, jar } = resolved;
  const payload = resolved.authorizationRequestPayload as Json;
  // Only requests signed by the DID their client id names: the signature is what tells the holder who asks.
  if (verifier.prefix !== 'decentralized_identifier' || !jar) {
    throw new WalletError('unsupported', `the request's client id (${verifier.original.clientId ?? '?'}) uses the ${verifier.prefix} prefix; the wallet answers only requests signed by a DID verifier (decentralized_identifier: / client_id_scheme did)`);
  }
  ctx.log(`request object ${jar.sendBy === 'reference' ? 'fetched' : 'received'}: signed by ${jar.signer.method === 'did' ? jar.signer.didUrl : jar.signer.method}, the verifier ${verifier.identifier}; OpenID4VP ${resolved.version === 100 ? '1.0' : `draft ${resolved.version}`}`);

  const responseMode = String(payload.response_mode ?? 'fragment');
  if (responseMode !== 'direct_post' && responseMode !== 'direct_post.jwt') {
    throw new WalletError('unsupported', `response_mode ${responseMode}: the wallet answers direct_post and direct_post.jwt requests only`);
  }
  const responseUri = typeof payload.response_uri === 'string' ? payload.response_uri : undefined;
  if (!responseUri) throw new WalletError('invalid_request', 'the request has no response_uri');
  const nonce = String(payload.nonce);
  const aud = verifier.effective;

  const stored = await ctx.store.credentials();
  const held: Held[] = await Promise.all(stored.map(async (s) => ({ stored: s, payload: (await decodedPayload(s.format, s.credential)).payload })));
  const used = new Set<string>();
  const definition = resolved.pex?.presentation_definition as Json | undefined;
  let selections: Selection[];
  let kind: PresentResult['query'];
  if (resolved.dcql?.query) {
    kind = 'dcql';
    selections = selectDcql(ctx, resolved.dcql.query, held, chosenIds, used);
  } else if (definition) {
    kind = 'presentation_definition';
    selections = selectPex(ctx, definition, held, chosenIds, used);
  } else {
    throw new WalletError('invalid_request', 'the request carries neither a DCQL query nor a presentation definition');
  }
  const unused = chosenIds.filter((id) => !used.has(id));
  if (unused.length) throw new WalletError('no_matching_credential', `--credential ${unused.join(', ')} answers none of the request's ${kind === 'dcql' ? 'credential queries' : 'input descriptors'}`);
  ctx.log(`matched (${kind}): ${selections.map((s) => `${s.queryId} ← ${s.held.stored.id}`).join(', ')}`);

  const built = await Promise.all(selections.map((s) => build(ctx, s, aud, nonce, kind === 'presentation_definition' ? formatsNamed(definition!, s.queryId) : [])));
  const presented = selections.map((s, i) => ({ query_id: s.queryId, credential_id: s.held.stored.id, format: s.held.stored.format, disclosed: built[i]!.disclosed }));
  for (const p of presented) ctx.log(`${p.query_id}: ${p.format}${p.format === 'jwt_vc_json' ? ' in a VP signed by the holder' : `, disclosing ${p.disclosed.length ? p.disclosed.join(', ') : 'no selectively disclosable claim'}, with a key binding JWT`}`);

  let vpToken: unknown;
  let submission: Json | undefined;
  if (kind === 'dcql') {
    // 1.0: each query id maps to an array of presentations; drafts used one presentation per id.
    vpToken = Object.fromEntries(selections.map((s, i) => [s.queryId, resolved.version === 100 ? [built[i]!.presentation] : built[i]!.presentation]));
  } else {
    const one = built.length === 1;
    vpToken = one ? built[0]!.presentation : built.map((b) => b.presentation);
    submission = {
      id: randomUUID(),
      definition_id: definition!.id,
      descriptor_map: selections.map((s, i) => {
        const path = one ? '$' : `$[${i}]`;
        const b = built[i]!;
        return s.held.stored.format === 'jwt_vc_json'
          ? { id: s.queryId, format: b.descriptorFormat, path, path_nested: { id: s.queryId, format: 'jwt_vc_json', path: '$.vp.verifiableCredential[0]' } }
          : { id: s.queryId, format: b.descriptorFormat, path };
      }),
    };
  }

  let response: Response;
  try {
    const authorizationRequestPayload = resolved.authorizationRequestPayload;
    const created = await client.createOpenid4vpAuthorizationResponse({
      authorizationRequestPayload,
      authorizationResponsePayload: { vp_token: vpToken as never, ...(submission ? { presentation_submission: submission } : {}) },
      ...(responseMode === 'direct_post.jwt' ? { jarm: jarmOptions() } : {}),
    });
    response = (
      await client.submitOpenid4vpAuthorizationResponse({
        authorizationRequestPayload: authorizationRequestPayload as never,
        authorizationResponsePayload: created.authorizationResponsePayload,
        ...(created.jarm ? { jarm: { responseJwt: created.jarm.responseJwt } } : {}),
      })
    ).response;
  } catch (err) {
    throw libraryError(err, `posting the response to ${responseUri}`, 'verifier_error');
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    // not JSON: keep the text
  }
  ctx.log(`response posted (${responseMode}${responseMode === 'direct_post.jwt' ? `, encrypted ECDH-ES to the verifier's key` : ''}) to ${responseUri}: ${response.status}`);
  return { client_id: aud, response_uri: responseUri, query: kind, presented, accepted: response.ok, verifier: { status: response.status, body } };
}
