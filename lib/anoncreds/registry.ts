// The AnonCreds registry of a wallet: schemas and credential definitions, published under the
// wallet's public did:web DID with the did:web AnonCreds method (identifiers.ts). Schemas are made
// in the request; a credential definition's keys take seconds of CPU, so the request stores it in
// state `wait` with a job, and the anoncreds worker (cred-def-worker.ts) makes the keys.
import { createHash } from 'node:crypto';
import { ulid } from '../ids';
import * as z from 'zod';
import { readPublicDid } from '../dids/records';
import type { EventPublisher } from '../events/publisher';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { prefixPage } from '../http/paging';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type Item, type ItemKey, type ItemStore, type WriteOp } from '../store/port';
import { didWebIdOf, objectId, objectUrl, parseObjectId, resourceIdOf, RESOURCE_ID, statusListEndpoint, tailsUrl } from './identifiers';
import { attrCommonView } from './objects';

export const REGISTRY_LIMITS = {
  /** anoncreds-rs MAX_ATTRIBUTES_COUNT (and Indy's schema limit). */
  maxAttributes: 125,
  maxAttributeLength: 256,
  maxNameLength: 256,
  maxVersionLength: 32,
  maxTagLength: 64,
  /** Schemas per wallet (never deleted). */
  schemasPerWallet: 1000,
  /** Credential definitions per wallet: each is seconds of the shared worker's CPU. */
  credDefsPerWallet: 100,
  /** ACA-Py's lower bound on revocation_registry_size. */
  minRegistrySize: 4,
  /**
   * Our upper bound: the worker writes 2L + 1 tails in one job (120 s timeout); L = 4,096 is some
   * 10–15 s of CPU on a loaded machine, and its tails file (1 MiB) 9 stored chunks.
   */
  maxRegistrySize: 4096,
  /** ACA-Py's default registry size. */
  defaultRegistrySize: 1000,
} as const;

/** `schema_version`: dot-separated decimal numbers ("1.0", "2.3.1"), as Indy and ACA-Py expect. */
export const SCHEMA_VERSION = /^[0-9]{1,9}(\.[0-9]{1,9}){0,3}$/;
/** `tag`: letters, digits, `.`, `_`, `-` (it is part of item keys and of offers). */
export const CRED_DEF_TAG = /^[A-Za-z0-9._-]+$/;
/** The hidden attribute every AnonCreds credential definition adds (the holder's link secret). */
export const LINK_SECRET_ATTRIBUTE = 'master_secret';

// Control characters (C0, DEL, C1), line and paragraph separators: never in a name a UI will show.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export type CredDefState = 'wait' | 'finished' | 'failed';

export interface AnonCredsSchema {
  readonly issuerId: string;
  readonly name: string;
  readonly version: string;
  readonly attrNames: string[];
}

export interface SchemaRecord {
  readonly schema_id: string;
  readonly schema: AnonCredsSchema;
  /** Where holders resolve it (the did:web AnonCreds method's URL; no key). */
  readonly url: string;
  readonly created_at: string;
}

export interface CredDefRecord {
  readonly id: string;
  /** The AnonCreds id, known once the keys exist (it is the hash of the object): null until `finished`. */
  readonly credential_definition_id: string | null;
  readonly schema_id: string;
  readonly issuer_id: string;
  readonly tag: string;
  readonly support_revocation: boolean;
  /** L of the revocation registry (null when not revocable); its indices 1 … L−1 are usable. */
  readonly revocation_registry_size: number | null;
  /** The revocation registry, once finished (revocable definitions only). */
  readonly revocation_registry: RevocationRegistryRef | null;
  readonly state: CredDefState;
  readonly error_msg: string | null;
  readonly url: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface RevocationRegistryRef {
  /** `<did>?service=anoncreds&relativeRef=/revRegDef/<resource id>` */
  readonly revocation_registry_id: string;
  /** Where resolvers fetch the registry definition. */
  readonly url: string;
  /** The status list endpoint: `<status_list_url>/<timestamp>` answers the list in force then. */
  readonly status_list_url: string;
  /** The tails file (`value.tailsLocation`). */
  readonly tails_location: string;
  readonly tails_hash: string;
}

export const registryKeys = {
  schema: (s: TenantScope, resourceId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACSCH#${resourceId}` }),
  schemaPrefix: 'ACSCH#',
  /** Uniqueness of name and version in the wallet. */
  schemaNameVersion: (s: TenantScope, name: string, version: string): ItemKey => ({
    PK: keys.walletPartition(s),
    SK: `ACSCHNV#${createHash('sha256').update(JSON.stringify([name, version])).digest('base64url')}`,
  }),
  schemaQuota: (s: TenantScope): ItemKey => ({ PK: keys.walletPartition(s), SK: 'QUOTA#ACSCH' }),
  credDef: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACCD#${id}` }),
  credDefPrefix: 'ACCD#',
  /** Uniqueness of the tag per schema. */
  credDefTag: (s: TenantScope, schemaResourceId: string, tag: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACCDTAG#${schemaResourceId}#${tag}` }),
  credDefQuota: (s: TenantScope): ItemKey => ({ PK: keys.walletPartition(s), SK: 'QUOTA#ACCD' }),
  /** The published object, by its resource id (public reads, and admin reads by AnonCreds id). */
  credDefPublic: (s: TenantScope, resourceId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACCDPUB#${resourceId}` }),
  /** The sealed private key (sealed-keys.ts). */
  credDefKey: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACCDKEY#${id}` }),
  /** The worker's job, staged with the record: the relay queues it on `anoncreds` (outbox). */
  credDefJob: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `JOBQ#ACCD#${id}` }),
};

export const CRED_DEF_JOB_TYPE = 'anoncreds_cred_def_job';
const JOB_TTL_SECONDS = 86_400;

/** The message on the `anoncreds` queue: make the keys of one credential definition. */
export const CredDefJob = z.object({
  v: z.literal(1),
  wallet_id: z.string().min(1).max(32),
  definition_id: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/),
  /** Times the job was put back over its wallet's cap (lib/fairness). */
  deferrals: z.number().int().min(0).optional(),
});
export type CredDefJob = z.infer<typeof CredDefJob>;

export function credDefJobFromOutboxItem(item: Item): CredDefJob | null {
  if (item.type !== CRED_DEF_JOB_TYPE) return null;
  const parsed = CredDefJob.safeParse(item.job);
  return parsed.success ? parsed.data : null;
}

export function parseCredDefJob(body: string): CredDefJob | null {
  try {
    const parsed = CredDefJob.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

const bad = (message: string, code: string) => new BadRequestError(message, code);

/**
 * The schema checks, each its own code: a name and a version ACA-Py and Indy accept, 1–125 attribute
 * names, none empty or over 256 characters, and none equal to another or to `master_secret` once
 * spaces are removed and case is folded (anoncreds-rs matches attributes that way, `attr_common_view`).
 */
export function validateSchemaInput(input: { schema_name: string; schema_version: string; attributes: string[] }): void {
  const { schema_name: name, schema_version: version, attributes } = input;
  if (name.trim().length === 0 || name.length > REGISTRY_LIMITS.maxNameLength || CONTROL.test(name) || name !== name.trim()) {
    throw bad(`schema_name must be 1–${REGISTRY_LIMITS.maxNameLength} characters, without control characters or surrounding spaces`, 'invalid_schema_name');
  }
  if (version.length > REGISTRY_LIMITS.maxVersionLength || !SCHEMA_VERSION.test(version)) {
    throw bad('schema_version must be dot-separated numbers such as "1.0" (at most four parts)', 'invalid_schema_version');
  }
  if (attributes.length === 0 || attributes.length > REGISTRY_LIMITS.maxAttributes) {
    throw bad(`attributes must list 1–${REGISTRY_LIMITS.maxAttributes} names`, 'invalid_attributes');
  }
  const seen = new Map<string, string>();
  for (const a of attributes) {
    const common = attrCommonView(a);
    if (common.length === 0 || a.length > REGISTRY_LIMITS.maxAttributeLength || CONTROL.test(a) || a !== a.trim()) {
      throw bad(`Attribute ${JSON.stringify(a.slice(0, 64))} must be 1–${REGISTRY_LIMITS.maxAttributeLength} characters, not blank, without control characters or surrounding spaces`, 'invalid_attributes');
    }
    if (common === LINK_SECRET_ATTRIBUTE || common === '__proto__') {
      throw bad(`Attribute ${JSON.stringify(a)} is reserved (AnonCreds credentials carry the holder's link secret as ${LINK_SECRET_ATTRIBUTE})`, 'reserved_attribute');
    }
    const earlier = seen.get(common);
    if (earlier !== undefined) {
      throw bad(`Attributes ${JSON.stringify(earlier)} and ${JSON.stringify(a)} are the same name once spaces are removed and case is ignored`, 'duplicate_attribute');
    }
    seen.set(common, a);
  }
}

export function validateCredDefInput(input: { tag: string; support_revocation: boolean; revocation_registry_size?: number | undefined }): void {
  if (input.tag.length === 0 || input.tag.length > REGISTRY_LIMITS.maxTagLength || !CRED_DEF_TAG.test(input.tag)) {
    throw bad(`tag must be 1–${REGISTRY_LIMITS.maxTagLength} letters, digits, ".", "_" or "-"`, 'invalid_tag');
  }
  const size = input.revocation_registry_size;
  if (size !== undefined && (!Number.isInteger(size) || size < REGISTRY_LIMITS.minRegistrySize || size > REGISTRY_LIMITS.maxRegistrySize)) {
    throw bad(`revocation_registry_size must be an integer from ${REGISTRY_LIMITS.minRegistrySize} to ${REGISTRY_LIMITS.maxRegistrySize}`, 'invalid_registry_size');
  }
}

export interface RegistryDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly now?: () => Date;
}

/** The issuer of new objects: the wallet's public DID, which must be a did:web DID of this service. */
async function issuerDid(store: ItemStore, scope: TenantScope): Promise<string> {
  const did = await readPublicDid(store, scope);
  if (!did) throw bad('The wallet has no public DID: create a did:web DID and make it public (POST /api/v1/set-public-did) first', 'public_did_required');
  if (did.method !== 'web') {
    throw bad(`AnonCreds objects are published under a did:web public DID (the did:web AnonCreds method); the public DID is did:${did.method}`, 'public_did_not_web');
  }
  if (did.deactivated_at) throw bad('The public DID is deactivated', 'public_did_required');
  return did.qualified;
}

function schemaFromItem(i: Item, baseUrl: string): SchemaRecord {
  const schema = JSON.parse(i.document as string) as AnonCredsSchema;
  return { schema_id: i.schema_id as string, schema, url: objectUrl(baseUrl, didWebIdOf(schema.issuerId), 'schema', i.resource_id as string), created_at: i.created_at as string };
}

export function credDefFromItem(i: Item, baseUrl: string): CredDefRecord {
  const rid = typeof i.resource_id === 'string' ? i.resource_id : null;
  const revRid = typeof i.rev_reg_resource_id === 'string' ? i.rev_reg_resource_id : null;
  const didId = didWebIdOf(i.issuer_id as string);
  return {
    id: i.id as string,
    credential_definition_id: (i.credential_definition_id as string | undefined) ?? null,
    schema_id: i.schema_id as string,
    issuer_id: i.issuer_id as string,
    tag: i.tag as string,
    support_revocation: i.support_revocation === true,
    revocation_registry_size: typeof i.revocation_registry_size === 'number' ? i.revocation_registry_size : null,
    revocation_registry: revRid
      ? {
          revocation_registry_id: i.rev_reg_def_id as string,
          url: objectUrl(baseUrl, didId, 'revRegDef', revRid),
          status_list_url: statusListEndpoint(baseUrl, didId, revRid),
          tails_location: tailsUrl(baseUrl, didId, i.tails_hash as string),
          tails_hash: i.tails_hash as string,
        }
      : null,
    state: i.state as CredDefState,
    error_msg: (i.error_msg as string | undefined) ?? null,
    url: rid ? objectUrl(baseUrl, didId, 'credDef', rid) : null,
    created_at: i.created_at as string,
    updated_at: i.updated_at as string,
  };
}

export class AnonCredsRegistry {
  constructor(private readonly deps: RegistryDeps) {}

  #now(): string {
    return (this.deps.now?.() ?? new Date()).toISOString();
  }

  async createSchema(scope: TenantScope, baseUrl: string, input: { schema_name: string; schema_version: string; attributes: string[] }): Promise<SchemaRecord> {
    validateSchemaInput(input);
    const issuerId = await issuerDid(this.deps.store, scope);
    const schema: AnonCredsSchema = { issuerId, name: input.schema_name, version: input.schema_version, attrNames: [...input.attributes] };
    const resourceId = resourceIdOf(schema);
    const schemaId = objectId(issuerId, 'schema', resourceId);
    const created_at = this.#now();
    try {
      await this.deps.store.write([
        { type: 'put', condition: 'not_exists', item: { ...registryKeys.schemaNameVersion(scope, schema.name, schema.version), type: 'anoncreds_schema_name', resource_id: resourceId } },
        { type: 'put', condition: 'not_exists', item: { ...registryKeys.schema(scope, resourceId), type: 'anoncreds_schema', schema_id: schemaId, resource_id: resourceId, issuer_id: issuerId, name: schema.name, version: schema.version, document: JSON.stringify(schema), created_at } },
        { type: 'update', key: registryKeys.schemaQuota(scope), set: { type: 'quota' }, add: { count: 1 }, condition: { below: { count: REGISTRY_LIMITS.schemasPerWallet } } },
      ]);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      if (err.failedIndexes.includes(0) || err.failedIndexes.includes(1)) {
        throw new ConflictError(`This wallet already has a schema ${schema.name} version ${schema.version}: a changed schema is a new version`, 'schema_exists');
      }
      throw new ConflictError(`This wallet has ${REGISTRY_LIMITS.schemasPerWallet} schemas, the most it may keep`, 'schema_quota_exceeded');
    }
    return { schema_id: schemaId, schema, url: objectUrl(baseUrl, didWebIdOf(issuerId), 'schema', resourceId), created_at };
  }

  /** The wallet's schema by its schema_id or its resource id; undefined when the wallet has none such. */
  async schemaItem(scope: TenantScope, id: string): Promise<Item | undefined> {
    const parsed = parseObjectId(id, 'schema');
    const resourceId = parsed ? parsed.resourceId : RESOURCE_ID.test(id) ? id : null;
    if (!resourceId) return undefined;
    const item = await this.deps.store.get(registryKeys.schema(scope, resourceId));
    if (!item || (parsed && item.schema_id !== id)) return undefined;
    return item;
  }

  async getSchema(scope: TenantScope, baseUrl: string, id: string): Promise<SchemaRecord> {
    const item = await this.schemaItem(scope, id);
    if (!item) throw new NotFoundError('No such schema in this wallet', 'schema_not_found');
    return schemaFromItem(item, baseUrl);
  }

  async listSchemas(scope: TenantScope, baseUrl: string, page: { limit: number; cursor: string | undefined }): Promise<{ items: SchemaRecord[]; next: string | null }> {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), registryKeys.schemaPrefix, page);
    return { items: out.items.map((i) => schemaFromItem(i, baseUrl)), next: out.next };
  }

  /**
   * Stores the definition in state `wait` with its job (one transaction: the record, the tag's
   * uniqueness, the quota, the outbox job). Nothing is generated here.
   */
  async requestCredDef(
    scope: TenantScope,
    baseUrl: string,
    input: { schema_id: string; tag: string; support_revocation: boolean; revocation_registry_size?: number | undefined },
  ): Promise<CredDefRecord> {
    validateCredDefInput(input);
    const schema = await this.schemaItem(scope, input.schema_id);
    if (!schema) throw new NotFoundError('No such schema in this wallet', 'schema_not_found');
    const issuerId = await issuerDid(this.deps.store, scope);
    const id = ulid();
    const at = this.#now();
    const item = {
      ...registryKeys.credDef(scope, id),
      type: 'anoncreds_cred_def',
      id,
      schema_id: schema.schema_id as string,
      schema_resource_id: schema.resource_id as string,
      issuer_id: issuerId,
      tag: input.tag,
      support_revocation: input.support_revocation,
      ...(input.support_revocation ? { revocation_registry_size: input.revocation_registry_size ?? REGISTRY_LIMITS.defaultRegistrySize } : {}),
      state: 'wait' as CredDefState,
      // The public base URL the request came in on: the worker names the published object's url with it.
      base_url: baseUrl,
      created_at: at,
      updated_at: at,
    };
    const job: CredDefJob = { v: 1, wallet_id: scope.walletId, definition_id: id };
    const ops: WriteOp[] = [
      { type: 'put', condition: 'not_exists', item: { ...registryKeys.credDefTag(scope, schema.resource_id as string, input.tag), type: 'anoncreds_cred_def_tag', definition_id: id } },
      { type: 'put', condition: 'not_exists', item },
      { type: 'update', key: registryKeys.credDefQuota(scope), set: { type: 'quota' }, add: { count: 1 }, condition: { below: { count: REGISTRY_LIMITS.credDefsPerWallet } } },
      { type: 'put', item: { ...registryKeys.credDefJob(scope, id), type: CRED_DEF_JOB_TYPE, job, ttl: Math.floor(Date.parse(at) / 1000) + JOB_TTL_SECONDS } },
    ];
    try {
      await this.deps.store.write(ops);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      if (err.failedIndexes.includes(0)) throw new ConflictError(`This schema already has a credential definition tagged ${input.tag} in this wallet`, 'cred_def_tag_exists');
      if (err.failedIndexes.includes(2)) throw new ConflictError(`This wallet has ${REGISTRY_LIMITS.credDefsPerWallet} credential definitions, the most it may keep`, 'cred_def_quota_exceeded');
      throw err;
    }
    return credDefFromItem(item, baseUrl);
  }

  /** The wallet's definition by its id or its AnonCreds id; undefined when the wallet has none such. */
  async credDefItem(scope: TenantScope, id: string): Promise<Item | undefined> {
    if (/^[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) return this.deps.store.get(registryKeys.credDef(scope, id));
    const parsed = parseObjectId(id, 'credDef');
    if (!parsed) return undefined;
    const pub = await this.deps.store.get(registryKeys.credDefPublic(scope, parsed.resourceId));
    if (!pub || pub.credential_definition_id !== id) return undefined;
    return this.deps.store.get(registryKeys.credDef(scope, pub.definition_id as string));
  }

  /** One definition with, once finished, its AnonCreds object and key-correctness proof (both public). */
  async getCredDef(scope: TenantScope, baseUrl: string, id: string): Promise<CredDefRecord & { credential_definition?: unknown; key_correctness_proof?: unknown }> {
    const item = await this.credDefItem(scope, id);
    if (!item) throw new NotFoundError('No such credential definition in this wallet', 'cred_def_not_found');
    const record = credDefFromItem(item, baseUrl);
    if (record.state !== 'finished' || typeof item.resource_id !== 'string') return record;
    const pub = await this.deps.store.get(registryKeys.credDefPublic(scope, item.resource_id));
    if (!pub) throw new Error('a finished credential definition has no published object');
    return { ...record, credential_definition: JSON.parse(pub.document as string), key_correctness_proof: JSON.parse(pub.key_correctness_proof as string) };
  }

  /** The wallet's definitions, oldest first, without their objects (each can be ~80 KB: GET one for it). */
  async listCredDefs(scope: TenantScope, baseUrl: string, page: { limit: number; cursor: string | undefined }): Promise<{ items: CredDefRecord[]; next: string | null }> {
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), registryKeys.credDefPrefix, page);
    return { items: out.items.map((i) => credDefFromItem(i, baseUrl)), next: out.next };
  }
}
