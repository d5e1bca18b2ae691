import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { BadRequestError, ConflictError, NotFoundError, RateLimitedError } from '../http/errors';
import { prefixPage } from '../http/paging';
import { KeyDisabledError, type KeyManager } from '../keys/port';
import type { TaaService } from '../taa/service';
import { keys, publishedDidIndex, type TenantScope } from '../store/keys';
import { ConditionFailedError, type ItemStore, type WriteOp } from '../store/port';
import { lostRace } from '../store/retry';
import {
  didJwk,
  didWeb,
  indyIdentifier,
  KEY_TYPE_ALG,
  METHOD_KEY_TYPES,
  multibaseKey,
  primaryFragment,
  rawPublicKey,
  type DidMethod,
  type KeyType,
} from './methods';
import type { PublicDidServices } from './didcomm-service';
import { didFromItem, didView, publicLookup, readDid, readPublicDid, type DidRecord } from './records';

export interface DidLimits {
  /** Active (not deactivated) DIDs per wallet: each holds a KMS key. */
  readonly maxDids: number;
  /** DID creations per wallet per minute: KMS CreateKey's rate is shared by every tenant of the account. */
  readonly maxCreationsPerMinute: number;
}

export interface DidServiceDeps {
  readonly store: ItemStore;
  readonly keyManager: KeyManager;
  readonly taa: TaaService;
  readonly indyNamespace: string;
  readonly limits: DidLimits;
  /** The DIDComm service that follows the public DID (lib/didcomm/public-did.ts). */
  readonly didcomm: PublicDidServices;
  readonly now?: () => Date;
}

function quotaExceeded(max: number): ConflictError {
  return new ConflictError(
    `This wallet has ${max} active DIDs, its limit; deactivate one (POST /api/v1/dids/{did}/deactivate) or ask the operator to raise it`,
    'did_quota_exceeded',
  );
}

export class DidService {
  private readonly now: () => Date;

  constructor(private readonly deps: DidServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** A new key in the key manager and a DID on it; the DID's document is served once it is published. */
  async create(scope: TenantScope, input: { method: DidMethod; keyType?: KeyType | undefined; baseUrl: string }): Promise<DidRecord> {
    const allowed = METHOD_KEY_TYPES[input.method];
    const keyType = input.keyType ?? allowed[0]!;
    if (!allowed.includes(keyType)) {
      throw new BadRequestError(`did:${input.method} supports key types: ${allowed.join(', ')}`, 'unsupported_key_type', [
        { path: 'options.key_type', message: `not supported by did:${input.method}` },
      ]);
    }
    const alg = KEY_TYPE_ALG[keyType];
    await this.countCreation(scope);
    const { maxDids } = this.deps.limits;
    // A full quota is refused before a KMS key is paid for; the recording transaction below decides races.
    const quota = await this.deps.store.get(keys.didQuota(scope));
    if (((quota?.active as number | undefined) ?? 0) >= maxDids) throw quotaExceeded(maxDids);
    const key = await this.deps.keyManager.create(scope, alg);
    const jwk = key.publicJwk;
    let did: string;
    let qualified: string;
    switch (input.method) {
      case 'sov':
        did = indyIdentifier(jwk).nym;
        qualified = `did:sov:${did}`;
        break;
      case 'indy':
        qualified = did = `did:indy:${this.deps.indyNamespace}:${indyIdentifier(jwk).nym}`;
        break;
      case 'key':
        qualified = did = `did:key:${multibaseKey(jwk)}`;
        break;
      case 'jwk':
        qualified = did = didJwk(jwk);
        break;
      case 'web':
        qualified = did = didWeb(input.baseUrl, bs58.encode(randomBytes(16)));
        break;
    }
    const record: DidRecord = {
      did,
      qualified,
      method: input.method,
      key_type: keyType,
      alg,
      key_ref: key.ref,
      public_jwk: jwk,
      verkey: bs58.encode(rawPublicKey(jwk)),
      kid: `${qualified}#${primaryFragment(input.method, jwk)}`,
      posture: 'wallet_only',
      created_at: this.now().toISOString(),
    };
    try {
      // The quota is taken in the same transaction that records the DID, so it counts exactly.
      await this.deps.store.write([
        { type: 'put', condition: 'not_exists', item: { ...keys.did(scope, qualified), type: 'did', ...record, quota_counted: true } },
        { type: 'update', key: keys.didQuota(scope), set: { type: 'quota' }, add: { active: 1 }, condition: { below: { active: maxDids } } },
      ]);
    } catch (err) {
      // The key serves no DID: let it go rather than pay for it.
      await this.deps.keyManager.scheduleDeletion(scope, key.ref).catch(() => undefined);
      if (err instanceof ConditionFailedError && err.failedIndexes.includes(1)) throw quotaExceeded(maxDids);
      throw err;
    }
    return record;
  }

  /** Counts a creation in this minute's window; past the limit, a 429 saying when to retry. */
  private async countCreation(scope: TenantScope): Promise<void> {
    const now = this.now().getTime();
    const minute = Math.floor(now / 60_000);
    try {
      await this.deps.store.write([
        {
          type: 'update',
          key: keys.didCreations(scope, minute),
          set: { ttl: (minute + 2) * 60 },
          add: { count: 1 },
          condition: { below: { count: this.deps.limits.maxCreationsPerMinute } },
        },
      ]);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      throw new RateLimitedError(
        `At most ${this.deps.limits.maxCreationsPerMinute} DIDs per minute per wallet`,
        Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000)),
      );
    }
  }

  /**
   * Deactivates a DID: it resolves as deactivated from now on (credentials it signed stop verifying,
   * as a holder of a compromised key wants), stops counting against the quota, and its key is
   * scheduled for deletion. Repeating it finishes what an earlier attempt left undone.
   */
  async deactivate(scope: TenantScope, didInput: string): Promise<DidRecord> {
    let record = await this.get(scope, didInput);
    for (let round = 0; !record.deactivated_at; round++) {
      if (round === 3) throw new ConflictError('The DID is being changed by another request; retry', 'did_changed');
      const [pointer, quota] = await Promise.all([this.deps.store.get(keys.publicDid(scope)), this.deps.store.get(keys.didQuota(scope))]);
      if (pointer?.did === record.qualified) {
        throw new ConflictError("This is the wallet's public DID: make another DID public first", 'did_is_public');
      }
      const at = this.now().toISOString();
      // Only a DID the quota counted gives its slot back; the count cannot go below zero.
      const release = record.quota_counted === true && ((quota?.active as number | undefined) ?? 0) > 0;
      const ops: WriteOp[] = [
        { type: 'update', key: keys.did(scope, record.qualified), set: { deactivated_at: at }, condition: { missing: ['deactivated_at'] } },
        // The pointer must not move to this DID meanwhile.
        { type: 'check', key: keys.publicDid(scope), condition: pointer ? { equals: { did: pointer.did } } : 'not_exists' },
        ...(release ? [{ type: 'update', key: keys.didQuota(scope), set: {}, add: { active: -1 }, condition: { atLeast: { active: 1 } } } as const] : []),
      ];
      try {
        await this.deps.store.write(ops);
        record = { ...record, deactivated_at: at };
      } catch (err) {
        if (!lostRace(err)) throw err;
        record = await this.get(scope, didInput);
      }
    }
    if (!record.key_deletion_date) {
      let deletionDate: string;
      try {
        deletionDate = (await this.deps.keyManager.scheduleDeletion(scope, record.key_ref)).deletion_date;
      } catch (err) {
        // Already pending deletion (an earlier attempt scheduled it before recording the date).
        if (!(err instanceof KeyDisabledError)) throw err;
        deletionDate = 'scheduled';
      }
      await this.deps.store.write([{ type: 'update', key: keys.did(scope, record.qualified), set: { key_deletion_date: deletionDate }, condition: 'exists' }]);
      record = { ...record, key_deletion_date: deletionDate };
    }
    return record;
  }

  async list(scope: TenantScope, method?: DidMethod): Promise<DidRecord[]> {
    const items = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: keys.didPrefix });
    return items.map(didFromItem).filter((d) => method === undefined || d.method === method);
  }

  /** One page of the wallet's DIDs; with a `method` filter a page may hold fewer than `limit` (follow `next`). */
  async listPage(scope: TenantScope, page: { limit: number; cursor: string | undefined; method?: DidMethod | undefined }): Promise<{ items: DidRecord[]; next: string | null }> {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), keys.didPrefix, page);
    return { items: out.items.map(didFromItem).filter((d) => page.method === undefined || d.method === page.method), next: out.next };
  }

  get(scope: TenantScope, did: string): Promise<DidRecord> {
    return readDid(this.deps.store, scope, did);
  }

  publicDid(scope: TenantScope): Promise<DidRecord | null> {
    return readPublicDid(this.deps.store, scope);
  }

  /**
   * Makes a DID the wallet's public DID: the default issuer identity, and published, so anyone can
   * resolve its document without a key. A previous public DID stays resolvable ("posted"): credentials
   * it signed must keep verifying. The wallet's DIDComm service moves to the new public DID in the same
   * transaction (sov, indy and web only); setting the current public DID again adds a service it lacks.
   */
  async setPublic(scope: TenantScope, didInput: string): Promise<DidRecord> {
    const record = await this.get(scope, didInput);
    if (record.deactivated_at) throw new ConflictError('A deactivated DID cannot become the public DID', 'did_deactivated');
    // Two set-public-did calls at once (or a re-acceptance meanwhile): the loser reads again and retries.
    for (let round = 0; round < 3; round++) {
      const taaCheck = await this.deps.taa.requireAccepted(scope);
      const current = await this.deps.store.get(keys.publicDid(scope), { consistent: true });
      const didcomm = await this.deps.didcomm.writesFor(scope, record);
      if (current?.did === record.qualified) {
        if (didcomm.length === 0) return round === 0 ? record : this.get(scope, didInput);
        try {
          await this.deps.store.write([...didcomm, { type: 'check', key: keys.publicDid(scope), condition: { equals: { did: record.qualified } } }]);
          return record;
        } catch (err) {
          if (!lostRace(err)) throw err;
          continue;
        }
      }
      const at = this.now().toISOString();
      const publishedAt = record.published_at ?? at;
      const ops: WriteOp[] = [
        {
          type: 'update',
          key: keys.did(scope, record.qualified),
          condition: { missing: ['deactivated_at'] },
          set: { posture: 'public', published_at: publishedAt, ...publishedDidIndex(publicLookup(record.qualified)) },
        },
        {
          type: 'put',
          item: { ...keys.publicDid(scope), did: record.qualified, updated_at: at },
          condition: current ? { equals: { did: current.did } } : 'not_exists',
        },
      ];
      if (current) ops.push({ type: 'update', key: keys.did(scope, current.did as string), condition: 'exists', set: { posture: 'posted' } });
      if (taaCheck) ops.push(taaCheck);
      ops.push(...didcomm);
      try {
        await this.deps.store.write(ops);
        return { ...record, posture: 'public', published_at: publishedAt };
      } catch (err) {
        if (err instanceof ConditionFailedError && err.failedIndexes.includes(0)) {
          if ((await this.get(scope, didInput)).deactivated_at) throw new ConflictError('A deactivated DID cannot become the public DID', 'did_deactivated');
          throw new NotFoundError(`No DID ${didInput} in this wallet`, 'did_not_found');
        }
        // Otherwise the pointer or the acceptance changed meanwhile: the next round reads both again.
        if (!lostRace(err)) throw err;
      }
    }
    throw new ConflictError('The public DID is being changed by another request; retry', 'public_did_changed');
  }
}

export { didView };
