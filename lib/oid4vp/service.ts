import { randomBytes, randomUUID } from 'node:crypto';
import { signingIdentity } from '../dids/signing';
import type { EventPublisher } from '../events/publisher';
import { BadRequestError, NotFoundError, type ErrorDetail } from '../http/errors';
import { prefixPage } from '../http/paging';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type Item, type ItemStore } from '../store/port';
import type { WalletRefs } from '../tenancy/public-refs';
import { dcqlFromDefinition, validateDcqlQuery, validatePresentationDefinition } from './query';
import {
  definitionFromItem,
  oid4vpKeys,
  PRESENTATION_EVENTS,
  presentationFromItem,
  REQUEST_LIFETIME,
  requestObjectUrl,
  verifierUrl,
  VP_ALGS,
  VP_FORMATS,
  VP_SK,
  type PresentationDefinitionRecord,
  type PresentationRecord,
  type PresentationState,
  type RequestQuery,
  type VpFormats,
} from './records';
import { clientIdOf, formatFamily, presentationView, requestView, settleExpiredPresentation } from './presentations';
import { loadTrustedIssuers, saveTrustedIssuers } from './trusted-issuers';

/** DID methods holder wallets resolve (Credo's holder, checked): did:sov / did:indy have no ledger here. */
export const RESOLVABLE_VERIFIER_METHODS = ['key', 'jwk', 'web'] as const;
/** `openid://` as the contract shows; the wallet's `client_id` and `request_uri` ride on it. */
const REQUEST_SCHEME = 'openid://';

const bad = (message: string, code: string, path: string) => new BadRequestError(message, code, [{ path, message }]);
const definitionNotFound = (id: string) => new NotFoundError(`No presentation definition ${id} in this wallet`, 'presentation_definition_not_found');
const presentationNotFound = (id: string) => new NotFoundError(`No presentation ${id} in this wallet`, 'presentation_not_found');

/** Checks `vp_formats` (contract 2.5) and keeps only the algorithms we verify; each problem names its path. */
export function checkVpFormats(input: Record<string, unknown>): { formats: VpFormats; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const formats: Record<string, Record<string, string[]>> = {};
  const entries = Object.entries(input);
  if (entries.length === 0) problems.push({ path: 'vp_formats', message: `name at least one format: ${VP_FORMATS.join(', ')}` });
  for (const [format, value] of entries) {
    const path = `vp_formats.${format}`;
    if (!(VP_FORMATS as readonly string[]).includes(format)) {
      problems.push({ path, message: `unsupported format; supported: ${VP_FORMATS.join(', ')}` });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push({ path, message: 'must be an object of algorithm lists' });
      continue;
    }
    const kept: Record<string, string[]> = {};
    for (const [key, algs] of Object.entries(value)) {
      if (!Array.isArray(algs) || algs.some((a) => typeof a !== 'string')) {
        problems.push({ path: `${path}.${key}`, message: 'must be an array of algorithm names' });
        continue;
      }
      const usable = (algs as string[]).filter((a) => (VP_ALGS as readonly string[]).includes(a));
      if (usable.length === 0) problems.push({ path: `${path}.${key}`, message: `none of these algorithms is verified here; use ${VP_ALGS.join(' or ')}` });
      else kept[key] = usable;
    }
    formats[format] = kept;
  }
  return { formats: formats as VpFormats, problems };
}

export interface CreateRequestInput {
  readonly pres_def_id?: string | undefined;
  readonly dcql_query?: Record<string, unknown> | undefined;
  readonly vp_formats: Record<string, unknown>;
  readonly did?: string | undefined;
  readonly expires_in?: number | undefined;
}

export interface PresentationFilters {
  readonly state?: PresentationState | undefined;
  readonly pres_def_id?: string | undefined;
}

export interface VerifierServiceDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  /** The wallet's public reference: the request URI names the wallet by it. */
  readonly refs: WalletRefs;
  readonly now?: () => Date;
  /** The local runtime: trusted issuer URLs on loopback hosts may use plain http. */
  readonly allowLoopbackIssuers?: boolean;
}

export class VerifierService {
  private readonly now: () => Date;

  constructor(private readonly deps: VerifierServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  // ---- the trusted-issuers setting (not in the contract) ----

  getTrustedIssuers(scope: TenantScope): Promise<string[]> {
    return loadTrustedIssuers(this.deps.store, scope);
  }

  putTrustedIssuers(scope: TenantScope, issuers: readonly string[]): Promise<string[]> {
    return saveTrustedIssuers(this.deps.store, scope, issuers, { allowLoopbackHttp: this.deps.allowLoopbackIssuers === true, at: this.now() });
  }

  // ---- presentation definitions (contract 4.5) ----

  async createDefinition(scope: TenantScope, presDef: unknown): Promise<PresentationDefinitionRecord> {
    const checked = validatePresentationDefinition(presDef);
    if (!checked.ok) throw new BadRequestError('pres_def is not a valid Presentation Exchange v2 definition', 'invalid_presentation_definition', checked.issues.map((i) => ({ path: `pres_def${i.path ? `.${i.path}` : ''}`, message: i.message })));
    const at = this.now().toISOString();
    const record: PresentationDefinitionRecord = { pres_def_id: randomUUID(), wallet_id: scope.walletId, pres_def: presDef as Record<string, unknown>, created_at: at, updated_at: at };
    await this.deps.store.write([{ type: 'put', item: { ...oid4vpKeys.definition(scope, record.pres_def_id), type: 'oid4vp_definition', ...record }, condition: 'not_exists' }]);
    return record;
  }

  async getDefinition(scope: TenantScope, id: string): Promise<PresentationDefinitionRecord> {
    const item = await this.deps.store.get(oid4vpKeys.definition(scope, id));
    if (!item) throw definitionNotFound(id);
    return definitionFromItem(item);
  }

  async listDefinitions(scope: TenantScope): Promise<PresentationDefinitionRecord[]> {
    return (await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: VP_SK.definition })).map(definitionFromItem);
  }

  async listDefinitionsPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }) {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), VP_SK.definition, page);
    return { items: out.items.map(definitionFromItem), next: out.next };
  }

  /** Deletes the definition; presentations made from it keep their copy of it and still verify. */
  async deleteDefinition(scope: TenantScope, id: string): Promise<void> {
    await this.deps.store.write([{ type: 'delete', key: oid4vpKeys.definition(scope, id), condition: 'exists' }]).catch((e: unknown) => {
      throw e instanceof ConditionFailedError ? definitionNotFound(id) : e;
    });
  }

  // ---- requests and presentations ----

  /** A presentation in `request-created`, its request-id lookup and the event: one transaction. */
  async createRequest(scope: TenantScope, input: CreateRequestInput, baseUrl: string) {
    if ((input.pres_def_id === undefined) === (input.dcql_query === undefined)) {
      throw bad('Give either pres_def_id (a stored presentation definition) or dcql_query (an OpenID4VP 1.0 DCQL query)', 'missing_query', input.pres_def_id === undefined ? 'pres_def_id' : 'dcql_query');
    }
    const { formats, problems } = checkVpFormats(input.vp_formats);
    if (problems.length) throw new BadRequestError('vp_formats names formats or algorithms this verifier cannot check', 'unsupported_vp_formats', problems);

    let query: RequestQuery;
    if (input.pres_def_id !== undefined) {
      const def = await this.getDefinition(scope, input.pres_def_id);
      const translated = dcqlFromDefinition(def.pres_def as never);
      if (!translated.ok) {
        throw new BadRequestError(
          'This presentation definition cannot be asked of OpenID4VP 1.0 wallets: no equivalent DCQL query (docs/oid4vp.md, "Definitions, requests and the two kinds of wallet")',
          'untranslatable_presentation_definition',
          translated.issues.map((i) => ({ path: `pres_def${i.path ? `.${i.path}` : ''}`, message: i.message })),
        );
      }
      query = { kind: 'pe', definition: def.pres_def, dcql: translated.query as Record<string, unknown> };
    } else {
      const checked = validateDcqlQuery(input.dcql_query);
      if (!checked.ok) throw new BadRequestError('dcql_query is not a DCQL query this verifier can answer', 'invalid_dcql_query', checked.issues.map((i) => ({ path: `dcql_query${i.path ? `.${i.path}` : ''}`, message: i.message })));
      query = { kind: 'dcql', dcql: input.dcql_query as Record<string, unknown> };
    }
    const families = new Set(Object.keys(formats).map((f) => formatFamily(f)));
    const asked = ((query.dcql.credentials as { id: string; format: string }[] | undefined) ?? []).find((c) => !families.has(formatFamily(c.format)));
    if (asked) throw bad(`The query asks for ${asked.format} (credential ${asked.id}), which vp_formats does not name`, 'vp_formats_mismatch', 'vp_formats');

    const { did, verificationMethod } = await signingIdentity(this.deps.store, scope, { did: input.did, verificationMethod: undefined });
    if (!(RESOLVABLE_VERIFIER_METHODS as readonly string[]).includes(did.method)) {
      throw bad(`Wallets cannot resolve ${did.qualified} (did:${did.method}) to check the request's signature: use a did:key, did:jwk or published did:web DID`, 'unresolvable_verifier_did', 'did');
    }
    if (did.method === 'web' && !did.published_at) {
      throw bad(`${did.qualified} is not published, so wallets cannot fetch its did.json: publish it (POST /api/v1/set-public-did) or use did:key / did:jwk`, 'unresolvable_verifier_did', 'did');
    }

    const now = this.now();
    const at = now.toISOString();
    const expiresAt = now.getTime() + (input.expires_in ?? REQUEST_LIFETIME.default) * 1000;
    const record: PresentationRecord = {
      presentation_id: randomUUID(),
      pres_def_id: input.pres_def_id ?? null,
      request_id: randomUUID(),
      wallet_id: scope.walletId,
      state: 'request-created',
      matched_credentials: null,
      errors: null,
      created_at: at,
      updated_at: at,
      vp_formats: formats,
      expires_at: expiresAt,
      query,
      verifier_did: did.qualified,
      verification_method: verificationMethod,
      // 256 bits: OpenID4VP §14.1 asks for enough entropy that a nonce cannot be guessed.
      nonce: randomBytes(32).toString('base64url'),
      oauth_state: randomBytes(32).toString('base64url'),
    };
    const verifier = verifierUrl(baseUrl, await this.deps.refs.of(scope));
    await this.deps.store.write([
      { type: 'put', item: { ...oid4vpKeys.presentation(scope, record.presentation_id), type: 'oid4vp_presentation', ...record }, condition: 'not_exists' },
      this.deps.events.stage(scope, PRESENTATION_EVENTS['request-created'], presentationView(record)).op,
    ]);
    const address = requestObjectUrl(verifier, record.presentation_id);
    const uri = (clientId: string, requestUri: string) => `${REQUEST_SCHEME}?client_id=${encodeURIComponent(clientId)}&request_uri=${encodeURIComponent(requestUri)}`;
    return {
      request_uri: uri(clientIdOf(record.verifier_did, 'v1'), address),
      // Draft-era wallets (Presentation Exchange): the same request, its definition as it was stored.
      ...(query.kind === 'pe' ? { request_uri_draft: uri(clientIdOf(record.verifier_did, 'draft'), `${address}?profile=draft`) } : {}),
      request: requestView(record),
      presentation: presentationView(record),
    };
  }

  private settle(scope: TenantScope, r: PresentationRecord) {
    return settleExpiredPresentation(this.deps, scope, r, this.now());
  }

  async getPresentation(scope: TenantScope, id: string): Promise<PresentationRecord> {
    const item = await this.deps.store.get(oid4vpKeys.presentation(scope, id));
    const record = item ? await this.settle(scope, presentationFromItem(item)) : null;
    if (!record) throw presentationNotFound(id);
    return record;
  }

  private async settleAll(scope: TenantScope, items: Item[], f: PresentationFilters): Promise<PresentationRecord[]> {
    const out: (PresentationRecord | null)[] = [];
    for (let i = 0; i < items.length; i += 10) {
      const batch = items.slice(i, i + 10).map(presentationFromItem);
      // A settle that fails is one of an expired request: it lists as such and a later read records it.
      out.push(...(await Promise.all(batch.map((r) => this.settle(scope, r).catch((): PresentationRecord => ({ ...r, state: 'expired' }))))));
    }
    return out.filter((r): r is PresentationRecord => r !== null && (f.state === undefined || r.state === f.state) && (f.pres_def_id === undefined || r.pres_def_id === f.pres_def_id));
  }

  async listPresentations(scope: TenantScope, filters: PresentationFilters = {}): Promise<PresentationRecord[]> {
    return this.settleAll(scope, await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: VP_SK.presentation }), filters);
  }

  async listPresentationsPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }, filters: PresentationFilters = {}) {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), VP_SK.presentation, page);
    return { items: await this.settleAll(scope, out.items, filters), next: out.next };
  }

  /** Deletes the presentation and its request: the request URI and the response endpoint answer 404 from then on. */
  async deletePresentation(scope: TenantScope, id: string): Promise<void> {
    const item = await this.deps.store.get(oid4vpKeys.presentation(scope, id), { consistent: true });
    if (!item) throw presentationNotFound(id);
    const r = presentationFromItem(item);
    await this.deps.store
      .write([
        { type: 'delete', key: oid4vpKeys.presentation(scope, id), condition: 'exists' },
        this.deps.events.stage(scope, 'oid4vp.presentation.removed', presentationView(r)).op,
      ])
      .catch((e: unknown) => {
        throw e instanceof ConditionFailedError ? presentationNotFound(id) : e;
      });
  }
}
