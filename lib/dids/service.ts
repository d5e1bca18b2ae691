import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import type { KeyManager } from '../keys/port';
import type { TaaService } from '../taa/service';
import { gsi1, keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, WriteConflictError, type ItemStore, type WriteOp } from '../store/port';
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
import { didFromItem, didView, publicLookup, type DidRecord } from './records';
import { qualify } from './resolver';

export interface DidServiceDeps {
  readonly store: ItemStore;
  readonly keyManager: KeyManager;
  readonly taa: TaaService;
  readonly indyNamespace: string;
  readonly now?: () => Date;
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
    await this.deps.store.write([{ type: 'put', condition: 'not_exists', item: { ...keys.did(scope, qualified), type: 'did', ...record } }]);
    return record;
  }

  async list(scope: TenantScope, method?: DidMethod): Promise<DidRecord[]> {
    const items = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: keys.didPrefix });
    return items.map(didFromItem).filter((d) => method === undefined || d.method === method);
  }

  async get(scope: TenantScope, did: string): Promise<DidRecord> {
    const item = await this.deps.store.get(keys.did(scope, qualify(did)));
    if (!item) throw new NotFoundError(`No DID ${did} in this wallet`, 'did_not_found');
    return didFromItem(item);
  }

  async publicDid(scope: TenantScope): Promise<DidRecord | null> {
    const pointer = await this.deps.store.get(keys.publicDid(scope));
    return pointer ? this.get(scope, pointer.did as string) : null;
  }

  /**
   * Makes a DID the wallet's public DID: the default issuer identity, and published, so anyone can
   * resolve its document without a key. A previous public DID stays resolvable ("posted"): credentials
   * it signed must keep verifying.
   */
  async setPublic(scope: TenantScope, didInput: string): Promise<DidRecord> {
    const record = await this.get(scope, didInput);
    // Two set-public-did calls at once (or a re-acceptance meanwhile): the loser reads again and retries.
    for (let round = 0; round < 3; round++) {
      const taaCheck = await this.deps.taa.requireAccepted(scope);
      const current = await this.deps.store.get(keys.publicDid(scope), { consistent: true });
      if (current?.did === record.qualified) return round === 0 ? record : this.get(scope, didInput);
      const at = this.now().toISOString();
      const publishedAt = record.published_at ?? at;
      const ops: WriteOp[] = [
        {
          type: 'update',
          key: keys.did(scope, record.qualified),
          condition: 'exists',
          set: { posture: 'public', published_at: publishedAt, ...gsi1.publishedDid(publicLookup(record.qualified)) },
        },
        {
          type: 'put',
          item: { ...keys.publicDid(scope), did: record.qualified, updated_at: at },
          condition: current ? { equals: { did: current.did } } : 'not_exists',
        },
      ];
      if (current) ops.push({ type: 'update', key: keys.did(scope, current.did as string), condition: 'exists', set: { posture: 'posted' } });
      if (taaCheck) ops.push(taaCheck);
      try {
        await this.deps.store.write(ops);
        return { ...record, posture: 'public', published_at: publishedAt };
      } catch (err) {
        if (err instanceof ConditionFailedError && err.failedIndexes.includes(0)) throw new NotFoundError(`No DID ${didInput} in this wallet`, 'did_not_found');
        // Otherwise the pointer or the acceptance changed meanwhile: the next round reads both again.
        if (!(err instanceof ConditionFailedError || err instanceof WriteConflictError)) throw err;
      }
    }
    throw new ConflictError('The public DID is being changed by another request; retry', 'public_did_changed');
  }
}

export { didView };
