import { createHash } from 'node:crypto';
import { readDid } from '../dids/records';
import type { EventPublisher } from '../events/publisher';
import { AppError, BadRequestError, NotFoundError } from '../http/errors';
import type { KeyManager } from '../keys/port';
import { issuerSigner } from '../keys/signer';
import type { TenantScope } from '../store/keys';
import { ConditionFailedError, type ItemStore } from '../store/port';
import type { WalletRefs } from '../tenancy/public-refs';
import { definitionFromItem, publicationUrl, STATUS_ATTRIBUTE, statusKeys, type DefinitionRecord, type ListType } from './records';
import type { StatusSize } from './encoding';
import { signIetfStatusListToken, signW3cStatusListCredential } from './tokens';

/**
 * How long verifiers may cache a list (Cache-Control max-age, IETF `ttl`, W3C `ttl`), and how long a
 * signature is valid (`exp`, `validUntil`). A list is re-signed when half its validity is gone, by the
 * first fetch after that: no scheduler has to remember every list.
 */
export const PUBLICATION = { ttlSeconds: 60, validitySeconds: 24 * 3600 } as const;

export const MEDIA_TYPES: Readonly<Record<ListType, string>> = { ietf: 'application/statuslist+jwt', w3c: 'application/vc+jwt' };

export interface Publication {
  readonly url: string;
  readonly token: string;
  readonly etag: string;
  readonly issued_at: number;
  readonly expires_at: number;
  /** Sum of the list's shard versions when it was built: only ever grows with the list's changes. */
  readonly content_version: number;
}

/**
 * A definition's statuses as IETF Token Status List values, whose meanings are fixed (0x00 valid,
 * 0x01 invalid, 0x02 suspended): revocation is 1 bit, suspension 2 bits with "set" written as 0x02.
 * Refresh and message statuses have no IETF form (null).
 */
export function ietfView(def: Pick<DefinitionRecord, 'status_purpose'>): { bits: StatusSize; value: (v: number) => number } | null {
  if (def.status_purpose === 'revocation') return { bits: 1, value: (v) => v };
  if (def.status_purpose === 'suspension') return { bits: 2, value: (v) => (v ? 2 : 0) };
  return null;
}

/**
 * The definition's signer is gone (deleted or deactivated DID): nothing can be signed until the
 * tenant names another (PUT publish with `did`). Retrying does not help, so jobs drop it.
 */
export class SignerUnavailableError extends AppError {
  constructor(message: string) {
    super(503, 'status_list_signer_unavailable', message);
  }
}

/** The number of shards of one list. */
export const shardCount = (def: Pick<DefinitionRecord, 'list_size' | 'shard_size'>) => Math.ceil(def.list_size / def.shard_size);

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

export interface PublisherDeps {
  readonly store: ItemStore;
  readonly keyManager: KeyManager;
  readonly events: EventPublisher;
  /** The wallet's public reference, which names it in the lists' URLs. */
  readonly refs: WalletRefs;
  readonly now?: () => Date;
}

/**
 * Builds, signs and stores a list's publication, and serves it. Building reads the list's shards
 * (strongly consistent) and sums their versions; a publication is stored only over an older one
 * (conditional on the stored version), so concurrent publishers never put an older list back.
 */
export class StatusListPublisher {
  private readonly now: () => Date;

  constructor(private readonly deps: PublisherDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Where a list of the definition is published (and what its token names as its `sub` / `id`). */
  async url(scope: TenantScope, def: DefinitionRecord, list: number, format: ListType): Promise<string> {
    return publicationUrl(def.base_url, await this.deps.refs.of(scope), def.id, list, format);
  }

  async definition(scope: TenantScope, defId: string): Promise<DefinitionRecord | null> {
    const item = await this.deps.store.get(statusKeys.definition(scope, defId));
    return item ? definitionFromItem(item) : null;
  }

  /** The list's non-zero statuses and its content version. */
  async read(scope: TenantScope, def: DefinitionRecord, list: number): Promise<{ entries: [number, number][]; version: number }> {
    const shardKeys = Array.from({ length: shardCount(def) }, (_, s) => statusKeys.shard(scope, def.id, list, s));
    const entries: [number, number][] = [];
    let version = 0;
    for (let i = 0; i < shardKeys.length; i += 100) {
      const items = await this.deps.store.getMany(shardKeys.slice(i, i + 100), { consistent: true });
      items.forEach((item, j) => {
        if (!item) return;
        const base = (i + j) * def.shard_size;
        version += typeof item.version === 'number' ? item.version : 0;
        for (const [name, value] of Object.entries(item)) {
          const m = STATUS_ATTRIBUTE.exec(name);
          if (m && typeof value === 'number' && value > 0) entries.push([base + Number(m[1]), value]);
        }
      });
    }
    return { entries, version };
  }

  async stored(scope: TenantScope, defId: string, list: number, format: ListType): Promise<Publication | null> {
    const item = await this.deps.store.get(statusKeys.publication(scope, defId, list, format));
    return item ? (item as unknown as Publication) : null;
  }

  /**
   * Publishes a list in one format unless the stored publication already shows its content and is not
   * half way to expiry (`force` signs anyway: PUT publish). Returns what is stored afterwards.
   */
  async publish(scope: TenantScope, def: DefinitionRecord, list: number, format: ListType, opts: { force?: boolean; current?: Publication | null } = {}): Promise<{ publication: Publication; signed: boolean }> {
    const current = opts.current !== undefined ? opts.current : await this.stored(scope, def.id, list, format);
    const { entries, version } = await this.read(scope, def, list);
    const now = this.now();
    const url = await this.url(scope, def, list, format);
    // A publication made under another URL (a wallet given its public reference later) names the wrong list: signed again.
    if (current && !opts.force && current.url === url && current.content_version >= version && !this.aging(current, now)) return { publication: current, signed: false };

    const did = await readDid(this.deps.store, scope, def.issuer_did).catch((e) => {
      if (e instanceof NotFoundError) throw new SignerUnavailableError(`The signer ${def.issuer_did} of status list definition ${def.id} is no longer a DID of this wallet: publish with another did`);
      throw e;
    });
    if (did.deactivated_at) throw new SignerUnavailableError(`The signer ${did.qualified} of status list definition ${def.id} is deactivated: publish with another did`);
    const signer = issuerSigner(this.deps.keyManager, scope, { ref: did.key_ref, alg: did.alg }, def.verification_method);
    const expiresAt = new Date(now.getTime() + PUBLICATION.validitySeconds * 1000);
    const ietf = format === 'ietf' ? ietfView(def) : null;
    if (format === 'ietf' && !ietf) throw new BadRequestError(`A ${def.status_purpose} list has no IETF Token Status List form (its values mean valid, invalid, suspended)`, 'unsupported_status_type', [{ path: 'status_type', message: 'w3c only for this purpose' }]);
    const input = {
      url,
      issuer: did.qualified,
      purpose: def.status_purpose,
      listSize: def.list_size,
      statusSize: ietf ? ietf.bits : def.status_size,
      entries: ietf ? entries.map(([i, v]): [number, number] => [i, ietf.value(v)]) : entries,
      issuedAt: now,
      expiresAt,
      ttlSeconds: PUBLICATION.ttlSeconds,
      ...(format === 'w3c' && def.status_message ? { statusMessage: def.status_message } : {}),
    };
    const token = format === 'ietf' ? await signIetfStatusListToken(input, signer) : await signW3cStatusListCredential(input, signer);
    const publication: Publication = {
      url,
      token,
      etag: `"${createHash('sha256').update(token).digest('base64url').slice(0, 32)}"`,
      issued_at: epoch(now),
      expires_at: epoch(expiresAt),
      content_version: version,
    };
    const event = this.deps.events.stage(scope, 'status_list.published', {
      definition_id: def.id,
      list,
      format,
      url,
      published_at: now.toISOString(),
      expires_at: expiresAt.toISOString(),
    });
    try {
      await this.deps.store.write([
        // Only over an older content version: a slower publisher of older content loses.
        { type: 'put', item: { ...statusKeys.publication(scope, def.id, list, format), type: 'status_publication', ...publication }, condition: { below: { content_version: version + 1 } } },
        { type: 'check', key: statusKeys.definition(scope, def.id), condition: 'exists' },
        event.op,
      ]);
    } catch (e) {
      if (!(e instanceof ConditionFailedError)) throw e;
      const newer = await this.stored(scope, def.id, list, format);
      if (!newer) throw new NotFoundError('No such status list', 'status_list_not_found');
      return { publication: newer, signed: false };
    }
    return { publication, signed: true };
  }

  private aging(p: Publication, now: Date): boolean {
    return p.expires_at - epoch(now) < PUBLICATION.validitySeconds / 2;
  }

  /**
   * What a verifier fetches. The stored publication when it is fresh; otherwise (never fetched yet,
   * or half way to expiry) it is signed now. Lists are those a definition has used and the next one.
   */
  async serve(scope: TenantScope, defId: string, list: number, format: ListType): Promise<Publication> {
    // With the definition: a deleted one's lists stop at once, before the background removes them.
    // Eventually consistent (half the read cost): a publication a moment old is what caching allows anyway.
    const [pubItem, defItem] = await this.deps.store.getMany([statusKeys.publication(scope, defId, list, format), statusKeys.definition(scope, defId)], { consistent: false });
    if (!defItem) throw new NotFoundError('No such status list', 'status_list_not_found');
    const current = pubItem ? (pubItem as unknown as Publication) : null;
    const def = definitionFromItem(defItem);
    if (current && !this.aging(current, this.now()) && current.url === (await this.url(scope, def, list, format))) return current;
    if (!(await this.listExists(scope, def, list))) throw new NotFoundError('No such status list', 'status_list_not_found');
    try {
      return (await this.publish(scope, def, list, format, { current })).publication;
    } catch (e) {
      // A publication still valid beats an error (a deactivated signer, KMS unavailable).
      if (current && current.expires_at > epoch(this.now())) return current;
      if (e instanceof SignerUnavailableError) throw new AppError(503, 'status_list_unavailable', 'This status list cannot be signed at the moment');
      throw e;
    }
  }

  /** Entries handed out so far (the definition's counter). */
  async entriesAssigned(scope: TenantScope, def: DefinitionRecord): Promise<number> {
    const counter = await this.deps.store.get(statusKeys.counter(scope, def.id), { consistent: true });
    return typeof counter?.next === 'number' ? counter.next : 0;
  }

  /** The lists of a definition that are in use (the spare comes after them). */
  async listsInUse(scope: TenantScope, def: DefinitionRecord): Promise<number> {
    return Math.ceil((await this.entriesAssigned(scope, def)) / def.list_size);
  }

  async listExists(scope: TenantScope, def: DefinitionRecord, list: number): Promise<boolean> {
    return list <= (await this.listsInUse(scope, def));
  }
}
