import { createHash } from 'node:crypto';
import { AppError, BadRequestError, ConflictError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type Item, type ItemKey, type ItemStore } from '../store/port';
import type { WalletRefs } from '../tenancy/public-refs';
import type { ContextLookup, JsonObject } from './loader';

/**
 * Context files (contract 4.7). Namespace rule: a file belongs to the wallet that stored it, and is
 * published as `<public_ref>:<context_file_id>` (`GET /context/{id}`), so two wallets may use the
 * same file name without meeting, and neither can write under the other's reference (the items live
 * in the wallet's own partition, which only its session reaches). Files are immutable: storing the
 * same id again with the same JSON is answered as the first time; with other JSON it is a 409, and
 * there is no route that changes or deletes one, so a credential that names a context's URL always
 * finds the same document. A new version is a new id (`employee-v2.jsonld`).
 */
export const CONTEXT_FILE_LIMITS = {
  /** The file as compact JSON (UTF-8): contexts are small; W3C credentials v2's is 12 KB. */
  maxBytes: 64 * 1024,
  /** Files per wallet (they are never deleted). */
  perWallet: 500,
} as const;

/** A safe file name: letters, digits, `.`, `_`, `-`, starting with a letter or digit, no `..`, at most 128 characters. */
export const CONTEXT_FILE_ID = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Between the wallet's public reference and the file name in a public id (neither can contain it). */
export const NAMESPACE_SEPARATOR = ':';

export const CONTEXT_PATH = '/context/';

export function publicContextId(ref: string, contextFileId: string): string {
  return `${ref}${NAMESPACE_SEPARATOR}${contextFileId}`;
}

export function contextUrl(baseUrl: string, ref: string, contextFileId: string): string {
  return `${baseUrl}${CONTEXT_PATH}${publicContextId(ref, contextFileId)}`;
}

/** The reference and file name of a public id, or null when it is not of that form. */
export function parsePublicContextId(id: string): { ref: string; contextFileId: string } | null {
  const at = id.indexOf(NAMESPACE_SEPARATOR);
  if (at < 1) return null;
  const contextFileId = id.slice(at + 1);
  return CONTEXT_FILE_ID.test(contextFileId) ? { ref: id.slice(0, at), contextFileId } : null;
}

export const contextFileKeys = {
  /** The document (its compact JSON) and its digest. */
  file: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `CTX#${id}` }),
  /** A small entry per file, so that listing reads no documents. */
  entry: (s: TenantScope, id: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `CTXL#${id}` }),
  entryPrefix: 'CTXL#',
  quota: (s: TenantScope): ItemKey => ({ PK: keys.walletPartition(s), SK: 'QUOTA#CTX' }),
};

/**
 * JSON with object keys sorted at every level: the form two uploads are compared in (key order is
 * not content). Hand-written: a dozen lines, where a canonical-JSON package would be a new dependency.
 */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const digestOf = (file: JsonObject) => createHash('sha256').update(sortedJson(file)).digest('base64url');

export interface StoredContextFile {
  readonly context_file_id: string;
  /** The compact JSON as stored and served. */
  readonly document: string;
  readonly digest: string;
  readonly created_at: string;
}

export interface ContextFileEntry {
  readonly id: string;
  readonly context_file_id: string;
  readonly url: string;
  readonly created_at: string;
}

export class ContextFiles {
  constructor(
    private readonly deps: {
      readonly store: ItemStore;
      readonly refs: WalletRefs;
      /** JSON-LD's check of a new file's @context (context-validation.ts); only the storing function has it, so the public one bundles no jsonld. */
      readonly validate?: (context: unknown, ownFiles: ContextLookup) => Promise<void>;
      readonly now?: () => Date;
    },
  ) {}

  /**
   * Stores a context file: validated (a JSON object whose `@context` JSON-LD accepts, every context
   * it imports bundled or this wallet's own), bounded, then written once.
   */
  async put(scope: TenantScope, baseUrl: string, contextFileId: string, file: JsonObject): Promise<{ message: string; id: string; context_file_id: string; url: string }> {
    if (!CONTEXT_FILE_ID.test(contextFileId)) throw new BadRequestError('context_file_id must be a safe file name: letters, digits, ".", "_" and "-", starting with a letter or digit, no "..", at most 128 characters', 'invalid_context_file_id');
    const document = JSON.stringify(file);
    const bytes = Buffer.byteLength(document, 'utf8');
    if (bytes > CONTEXT_FILE_LIMITS.maxBytes) throw new AppError(413, 'context_file_too_large', `The context file is ${bytes} bytes as compact JSON; at most ${CONTEXT_FILE_LIMITS.maxBytes} are accepted`);
    if (!Object.hasOwn(file, '@context')) throw new BadRequestError('file must be a JSON-LD document with a top-level @context', 'invalid_context_file');
    const ref = await this.deps.refs.of(scope);
    const answer = { id: publicContextId(ref, contextFileId), context_file_id: contextFileId, url: contextUrl(baseUrl, ref, contextFileId) };
    const digest = digestOf(file);

    const existing = await this.deps.store.get(contextFileKeys.file(scope, contextFileId), { consistent: true });
    if (existing) return { message: this.sameOrConflict(existing, digest, contextFileId), ...answer };

    if (!this.deps.validate) throw new Error('ContextFiles.put needs a validate function');
    await this.deps.validate(file['@context'], this.lookupFor(scope, baseUrl));
    const created_at = (this.deps.now?.() ?? new Date()).toISOString();
    try {
      await this.deps.store.write([
        { type: 'put', condition: 'not_exists', item: { ...contextFileKeys.file(scope, contextFileId), type: 'context_file', context_file_id: contextFileId, document, digest, created_at } },
        { type: 'put', condition: 'not_exists', item: { ...contextFileKeys.entry(scope, contextFileId), type: 'context_file_entry', context_file_id: contextFileId, created_at } },
        { type: 'update', key: contextFileKeys.quota(scope), set: { type: 'quota' }, add: { count: 1 }, condition: { below: { count: CONTEXT_FILE_LIMITS.perWallet } } },
      ]);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      if (err.failedIndexes.includes(2) && !err.failedIndexes.includes(0)) {
        throw new ConflictError(`This wallet has ${CONTEXT_FILE_LIMITS.perWallet} context files, the most it may keep`, 'context_file_quota_exceeded');
      }
      // Stored concurrently under the same id: the same answer as a later request would get.
      const raced = await this.deps.store.get(contextFileKeys.file(scope, contextFileId), { consistent: true });
      if (!raced) throw err;
      return { message: this.sameOrConflict(raced, digest, contextFileId), ...answer };
    }
    return { message: `Context file ${contextFileId} stored; it is served at ${answer.url}`, ...answer };
  }

  private sameOrConflict(existing: Item, digest: string, contextFileId: string): string {
    if (existing.digest !== digest) {
      throw new ConflictError(`A different context file ${contextFileId} is already stored, and context files never change: store the new version under a new context_file_id`, 'context_file_exists');
    }
    return `Context file ${contextFileId} was already stored with the same content`;
  }

  async get(scope: TenantScope, contextFileId: string): Promise<StoredContextFile | undefined> {
    if (!CONTEXT_FILE_ID.test(contextFileId)) return undefined;
    const item = await this.deps.store.get(contextFileKeys.file(scope, contextFileId));
    return item ? { context_file_id: item.context_file_id as string, document: item.document as string, digest: item.digest as string, created_at: item.created_at as string } : undefined;
  }

  /** The wallet's files, in name order (at most {@link CONTEXT_FILE_LIMITS.perWallet} small entries). */
  async list(scope: TenantScope, baseUrl: string): Promise<ContextFileEntry[]> {
    const ref = await this.deps.refs.of(scope);
    const items = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: contextFileKeys.entryPrefix, limit: CONTEXT_FILE_LIMITS.perWallet });
    return items.map((i) => {
      const name = i.context_file_id as string;
      return { id: publicContextId(ref, name), context_file_id: name, url: contextUrl(baseUrl, ref, name), created_at: i.created_at as string };
    });
  }

  /**
   * The loader's view of this wallet's files: a URL `<baseUrl>/context/<its reference>:<name>` is the
   * stored document; any other URL (another wallet's files included: a session reads only its own
   * wallet) is not a context file of this wallet.
   */
  lookupFor(scope: TenantScope, baseUrl: string): ContextLookup {
    const prefix = `${baseUrl}${CONTEXT_PATH}`;
    return async (url) => {
      if (!url.startsWith(prefix)) return undefined;
      const parsed = parsePublicContextId(url.slice(prefix.length));
      if (!parsed || parsed.ref !== (await this.deps.refs.of(scope))) return undefined;
      const stored = await this.get(scope, parsed.contextFileId);
      return stored ? (JSON.parse(stored.document) as JsonObject) : undefined;
    };
  }
}
