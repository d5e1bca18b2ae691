// A revocable credential definition's revocation registry in the store: its published definition,
// sealed γ, tails file (in chunks), status list (current on the registry item, every version kept for
// timestamp queries), the allocation of revocation indices and revocation itself.
//
// Items (wallet partition), by the registry's resource id (rid) or the tails hash:
//   ACRR#<rid>                 the registry: definition document, L, the allocation counter `issued`,
//                              the current status list and its `version`
//   ACRRKEY#<rid>              γ, sealed like the definition's private key (purpose rev-reg-private)
//   ACRRSL#<rid>#<ts>#<ver>    each published status list (ts: 12 digits, seconds; ver: 8 digits)
//   ACRRT#<tails hash>#<n>     the tails file in chunks of TAILS_PER_CHUNK tails (base64)
import { ConflictError, NotFoundError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, WriteConflictError, type Item, type ItemKey, type ItemStore, type WriteOp } from '../store/port';
import { g2FromString, g2ToString, scalarFromString } from './bn254';
import { objectId, resourceIdOf } from './identifiers';
import {
  createRevocationRegistryDefinition,
  createRevocationStatusList,
  parseRevocationStatusList,
  statusListToJson,
  updateRevocationStatusList,
  type RevocationPublicKey,
  type RevocationRegistryDefinitionJson,
  type RevocationStatusListJson,
} from './revocation';
import { SealedKeyVersionError, type CredDefKeySealer } from './sealed-keys';
import { TAIL_BYTES } from './tails';

/** Tails per stored chunk: 1,024 × 128 bytes = 128 KiB, 171 KiB in base64, well under DynamoDB's 400 KB item. */
export const TAILS_PER_CHUNK = 1024;

/** The registry tag anoncreds-rs / ACA-Py give a definition's first registry. */
export const REV_REG_TAG = '0';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

export const revRegKeys = {
  registry: (s: TenantScope, rid: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACRR#${rid}` }),
  gamma: (s: TenantScope, rid: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACRRKEY#${rid}` }),
  statusListPrefix: (rid: string) => `ACRRSL#${rid}#`,
  statusList: (s: TenantScope, rid: string, timestamp: number, version: number): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACRRSL#${rid}#${pad(timestamp, 12)}#${pad(version, 8)}` }),
  tailsPrefix: (tailsHash: string) => `ACRRT#${tailsHash}#`,
  tailsChunk: (s: TenantScope, tailsHash: string, n: number): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACRRT#${tailsHash}#${pad(n, 3)}` }),
};

export const REV_REG_PATHS = { revRegDef: 'revRegDef', revStatus: 'revStatus', tails: 'tails' } as const;

/** `<did>?service=anoncreds&relativeRef=/revRegDef/<rid>` (the did:web AnonCreds method). */
export function revRegDefId(issuerDid: string, rid: string): string {
  return objectId(issuerDid, 'revRegDef', rid);
}

export class RevocationRegistryFullError extends ConflictError {
  constructor(maxCredNum: number) {
    super(`Every revocation index of this registry (1 … ${maxCredNum - 1}) is allocated`, 'revocation_registry_full');
  }
}

/** What the worker writes for a new registry: the items, in the definition's transaction. */
export interface BuiltRegistry {
  readonly rid: string;
  readonly revRegDefId: string;
  readonly definition: RevocationRegistryDefinitionJson;
  readonly tailsFile: Buffer;
  readonly statusList: RevocationStatusListJson;
  readonly ops: WriteOp[];
}

/**
 * anoncreds-rs `create_revocation_registry_def` and `create_revocation_status_list` (issuance by
 * default) for a finished definition, with γ sealed and the tails file chunked. `endpoint` is the
 * DID's anoncreds service endpoint: the tails location is `<endpoint>/tails/<tails hash>`.
 */
export async function buildRevocationRegistry(input: {
  scope: TenantScope;
  sealer: CredDefKeySealer;
  definitionId: string;
  issuerId: string;
  credDefId: string;
  publicKey: RevocationPublicKey;
  maxCredNum: number;
  endpoint: string;
  now: Date;
}): Promise<BuiltRegistry> {
  const { scope } = input;
  const { definition, definitionPrivate, tailsFile } = createRevocationRegistryDefinition({
    issuerId: input.issuerId,
    credDefId: input.credDefId,
    tag: REV_REG_TAG,
    publicKey: input.publicKey,
    maxCredNum: input.maxCredNum,
    tailsLocation: (hash) => `${input.endpoint}/${REV_REG_PATHS.tails}/${hash}`,
  });
  const rid = resourceIdOf(definition);
  const id = revRegDefId(input.issuerId, rid);
  const timestamp = Math.floor(input.now.getTime() / 1000);
  const gamma = scalarFromString(definitionPrivate.value.gamma);
  const list = statusListToJson(
    createRevocationStatusList({ revRegDefId: id, issuerId: input.issuerId, gDash: input.publicKey.g_dash, gamma, maxCredNum: input.maxCredNum, timestamp }),
  );
  const sealed = await input.sealer.sealJson(scope.walletId, rid, 'rev-reg-private', JSON.stringify(definitionPrivate));
  const at = input.now.toISOString();
  const hash = definition.value.tailsHash;
  const tails = tailsFile.subarray(2); // after the version header: whole tails only
  const chunks = Math.ceil(tails.length / (TAILS_PER_CHUNK * TAIL_BYTES));
  const ops: WriteOp[] = [
    {
      type: 'put',
      condition: 'not_exists',
      item: {
        ...revRegKeys.registry(scope, rid),
        type: 'anoncreds_rev_reg',
        definition_id: input.definitionId,
        rev_reg_def_id: id,
        issuer_id: input.issuerId,
        cred_def_id: input.credDefId,
        document: JSON.stringify(definition),
        max_cred_num: input.maxCredNum,
        tails_hash: hash,
        tails_chunks: chunks,
        // g' (AMCL hex): what a revocation needs of the definition's key.
        g_dash: g2ToString(input.publicKey.g_dash),
        issued: 0,
        version: 1,
        status_list: JSON.stringify(list),
        created_at: at,
        updated_at: at,
      },
    },
    { type: 'put', condition: 'not_exists', item: { ...revRegKeys.gamma(scope, rid), type: 'anoncreds_rev_reg_key', ...sealed, created_at: at } },
    statusListPut(scope, rid, list, 1, input.issuerId),
  ];
  for (let n = 0; n < chunks; n++) {
    const from = n * TAILS_PER_CHUNK * TAIL_BYTES;
    ops.push({
      type: 'put',
      condition: 'not_exists',
      item: {
        ...revRegKeys.tailsChunk(scope, hash, n),
        type: 'anoncreds_tails_chunk',
        issuer_id: input.issuerId,
        chunks,
        data: tails.subarray(from, from + TAILS_PER_CHUNK * TAIL_BYTES).toString('base64'),
      },
    });
  }
  return { rid, revRegDefId: id, definition, tailsFile, statusList: list, ops };
}

function statusListPut(scope: TenantScope, rid: string, list: RevocationStatusListJson, version: number, issuerId: string): WriteOp {
  return {
    type: 'put',
    condition: 'not_exists',
    item: { ...revRegKeys.statusList(scope, rid, list.timestamp, version), type: 'anoncreds_rev_status_list', issuer_id: issuerId, version, document: JSON.stringify(list) },
  };
}

/** The registry's own writes in a revocation's transaction (the registry item, the list version); the caller's follow. */
export const REGISTRY_WRITES = 2;

/** How often a revocation retries after a concurrent revocation of the same registry won. */
const REVOKE_ATTEMPTS = 8;

export class RevocationRegistryStore {
  constructor(
    private readonly store: ItemStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async registry(scope: TenantScope, rid: string, consistent = false): Promise<Item | undefined> {
    return this.store.get(revRegKeys.registry(scope, rid), { consistent });
  }

  /**
   * The next revocation index of the registry, in 1 … L−1 (docs/anoncreds.md: index L has no place
   * in anoncreds-rs' status list), by a conditional counter: two allocations never get the same index.
   */
  async allocateIndex(scope: TenantScope, rid: string): Promise<number> {
    const reg = await this.registry(scope, rid);
    if (!reg) throw new NotFoundError('No such revocation registry in this wallet', 'rev_reg_not_found');
    const max = reg.max_cred_num as number;
    try {
      // Read first so a counter is never created on an item that does not exist.
      return await this.store.increment(revRegKeys.registry(scope, rid), 'issued', { below: { issued: max - 1 } });
    } catch (err) {
      if (err instanceof ConditionFailedError) throw new RevocationRegistryFullError(max);
      throw err;
    }
  }

  /**
   * The revocation index held by `claim` (an item naming what it is for, e.g. one credential exchange),
   * allocated on first call: the counter's step and the claim are one transaction, so a retried or
   * concurrent call for the same claim gets the same index and never takes a second one.
   */
  async allocateIndexOnce(scope: TenantScope, rid: string, claim: ItemKey): Promise<number> {
    for (let attempt = 0; attempt < REVOKE_ATTEMPTS; attempt++) {
      const held = await this.store.get(claim, { consistent: true });
      if (held) {
        if (held.rev_reg_resource_id !== rid || typeof held.index !== 'number') throw new Error('the claim holds an index of another registry');
        return held.index;
      }
      const reg = await this.registry(scope, rid, true);
      if (!reg) throw new NotFoundError('No such revocation registry in this wallet', 'rev_reg_not_found');
      const max = reg.max_cred_num as number;
      const issued = (reg.issued as number | undefined) ?? 0;
      if (issued >= max - 1) throw new RevocationRegistryFullError(max);
      try {
        await this.store.write([
          { type: 'update', key: revRegKeys.registry(scope, rid), set: { issued: issued + 1 }, condition: { equals: { issued } } },
          { type: 'put', condition: 'not_exists', item: { ...claim, type: 'anoncreds_rev_index_claim', rev_reg_resource_id: rid, index: issued + 1, created_at: this.now().toISOString() } },
        ]);
        return issued + 1;
      } catch (err) {
        // Another allocation moved the counter, or another run of the same claim won: read again.
        if (!(err instanceof ConditionFailedError) && !(err instanceof WriteConflictError)) throw err;
      }
    }
    throw new ConflictError('The registry was allocated concurrently too often: try again', 'rev_reg_busy');
  }

  /**
   * Revokes allocated indices: the accumulator and the status list move together, written conditional
   * on the list's version (a concurrent revocation makes this one read again and retry), and the new
   * list is kept as a version for timestamp queries. Indices already revoked are reported, not changed.
   *
   * `also`: further writes of the caller (an exchange moving to credential-revoked, its event, a
   * notification's outbox job) in the same transaction, written only when something is revoked. When
   * one of their conditions fails, the {@link ConditionFailedError} is thrown as it is (its
   * `failedIndexes` count from 2, after the registry and list writes), for the caller to read again and
   * decide; a concurrent revocation of the registry alone is retried here.
   */
  async revoke(
    scope: TenantScope,
    sealer: CredDefKeySealer,
    rid: string,
    indices: readonly number[],
    also: readonly WriteOp[] = [],
  ): Promise<{ revoked: number[]; alreadyRevoked: number[]; statusList: RevocationStatusListJson }> {
    const first = await this.registry(scope, rid, true);
    if (!first) throw new NotFoundError('No such revocation registry in this wallet', 'rev_reg_not_found');
    const sealedItem = await this.store.get(revRegKeys.gamma(scope, rid), { consistent: true });
    if (!sealedItem) throw new Error('a revocation registry has no sealed private part');
    let priv: { value: { gamma: string } };
    try {
      priv = (await sealer.openJson(scope.walletId, rid, 'rev-reg-private', sealedItem)) as { value: { gamma: string } };
    } catch (err) {
      // Nothing this code can open (docs/anoncreds.md, "The private key"): say so rather than a 500.
      if (err instanceof SealedKeyVersionError) throw new ConflictError(`${err.message}; credentials issued on this registry cannot be revoked by this version`, 'rev_reg_key_outdated');
      throw err;
    }
    const gamma = scalarFromString(priv.value.gamma);
    const gDash = g2FromString(first.g_dash as string);
    let reg = first;
    for (let attempt = 0; attempt < REVOKE_ATTEMPTS; attempt++) {
      const issued = (reg.issued as number | undefined) ?? 0;
      const unknown = indices.filter((i) => !Number.isInteger(i) || i < 1 || i > issued);
      if (unknown.length > 0) throw new NotFoundError(`Revocation index ${unknown[0]} was never allocated in this registry`, 'rev_index_not_found');
      const current = parseRevocationStatusList(JSON.parse(reg.status_list as string));
      const version = reg.version as number;
      const timestamp = Math.max(current.timestamp, Math.floor(this.now().getTime() / 1000));
      const next = updateRevocationStatusList(current, { gDash, gamma, revoked: [...indices], timestamp });
      if (next.revoked.length === 0) return { revoked: [], alreadyRevoked: next.unchanged, statusList: JSON.parse(reg.status_list as string) as RevocationStatusListJson };
      const list = statusListToJson(next.list);
      try {
        await this.store.write([
          {
            type: 'update',
            key: revRegKeys.registry(scope, rid),
            set: { status_list: JSON.stringify(list), version: version + 1, updated_at: this.now().toISOString() },
            condition: { equals: { version } },
          },
          statusListPut(scope, rid, list, version + 1, reg.issuer_id as string),
          ...also,
        ]);
        return { revoked: next.revoked, alreadyRevoked: next.unchanged, statusList: list };
      } catch (err) {
        if (!(err instanceof ConditionFailedError) && !(err instanceof WriteConflictError)) throw err;
        if (err instanceof ConditionFailedError && err.failedIndexes.some((i) => i >= REGISTRY_WRITES)) throw err;
        const again = await this.registry(scope, rid, true);
        if (!again) throw err;
        reg = again;
      }
    }
    throw new ConflictError('The registry was revoked concurrently too often: try again', 'rev_reg_busy');
  }

  /**
   * The status list in force at `timestamp` (seconds): the last version published at or before it,
   * and the timestamps of the versions around it. Three bounded queries.
   */
  async statusListAt(scope: TenantScope, rid: string, timestamp: number): Promise<{ document: string; previous: string; next: string } | undefined> {
    const pk = keys.walletPartition(scope);
    const prefix = revRegKeys.statusListPrefix(rid);
    const at = `${prefix}${pad(timestamp, 12)}#~`;
    const upTo = await this.store.query(pk, { skBetween: [prefix, at], descending: true, limit: 2 });
    const found = upTo[0];
    if (!found) return undefined;
    const after = await this.store.query(pk, { skBetween: [at, `${prefix}~`], limit: 1 });
    const ts = (i: Item | undefined) => (i ? String(JSON.parse(i.document as string).timestamp) : '');
    return { document: found.document as string, previous: ts(upTo[1]), next: ts(after[0]) };
  }

  /** The tails file (version header and tails), from its chunks: at most ⌈(2L+1)/1,024⌉ items. */
  async tails(scope: TenantScope, tailsHash: string, maxChunks: number): Promise<{ file: Buffer; issuerId: string } | undefined> {
    const chunks = await this.store.query(keys.walletPartition(scope), { skBeginsWith: revRegKeys.tailsPrefix(tailsHash), limit: maxChunks });
    const head = chunks[0];
    if (!head || chunks.length !== head.chunks) return undefined;
    return { file: Buffer.concat([Buffer.from([0, 2]), ...chunks.map((c) => Buffer.from(c.data as string, 'base64'))]), issuerId: head.issuer_id as string };
  }
}
