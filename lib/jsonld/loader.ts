import jsonld from 'jsonld';
import { AppError, BadRequestError } from '../http/errors';
import { BUNDLED_CONTEXTS } from './contexts';

export type JsonObject = Record<string, unknown>;
export type JsonLdLoader = DocumentLoader;

/**
 * A tenant's own context files by URL (lib/jsonld/context-files.ts): the document, or undefined when
 * the URL is not one of them.
 */
export type ContextLookup = (url: string) => Promise<JsonObject | undefined>;

/** At most this many context-file lookups per loader: a chain of imports cannot make one request read without end. */
export const MAX_TENANT_LOOKUPS = 16;

/** A context URL the loader does not hold: never fetched, always a 400 naming it. */
export class UnknownContextError extends BadRequestError {
  constructor(readonly url: string) {
    super(`Unknown JSON-LD context ${JSON.stringify(url)}: contexts are never fetched from the network; use a bundled context (docs/jsonld.md) or one of this wallet's context files`, 'unknown_context');
  }
}

/** A term no context in scope defines (JSON-LD would silently drop it from what is signed). */
export class UndefinedTermError extends BadRequestError {
  constructor(readonly term: string) {
    super(`The term ${JSON.stringify(term)} is not defined by any context of the document: define it in a context (or use a context that does); JSON-LD would drop it from what is signed`, 'undefined_term');
  }
}

/**
 * The loader every JSON-LD operation here uses: the bundled contexts from memory, then the tenant's
 * own context files through `contexts`; anything else is an {@link UnknownContextError}. It never
 * fetches, so jsonld's HTTP client (and its `undici`) is never called (the bundles alias it away).
 */
export function offlineDocumentLoader(opts: { readonly contexts?: ContextLookup } = {}): JsonLdLoader {
  const seen = new Map<string, Promise<JsonObject | undefined>>();
  return async (url: string) => {
    const bundled = BUNDLED_CONTEXTS.get(url);
    if (bundled) return { contextUrl: null, documentUrl: url, document: bundled };
    if (opts.contexts) {
      let found = seen.get(url);
      if (!found) {
        if (seen.size >= MAX_TENANT_LOOKUPS) throw new BadRequestError(`The document needs more than ${MAX_TENANT_LOOKUPS} context files`, 'too_many_contexts');
        found = opts.contexts(url);
        seen.set(url, found);
      }
      const document = await found;
      if (document) return { contextUrl: null, documentUrl: url, document };
    }
    throw new UnknownContextError(url);
  };
}

interface JsonLdErrorShape {
  readonly name?: string;
  readonly message?: string;
  readonly details?: { readonly code?: string; readonly url?: string; readonly cause?: unknown; readonly event?: { readonly code?: string; readonly message?: string; readonly details?: Record<string, unknown> } };
}

/**
 * What a jsonld failure means to the caller: our own errors from the loader come out as they were
 * thrown (jsonld wraps them), safe mode's first finding names its term, malformed JSON-LD is a 400.
 * Anything else is not the caller's doing and is rethrown as it is (a 500).
 */
export function callerErrorOf(err: unknown): unknown {
  const e = err as JsonLdErrorShape;
  if (err instanceof AppError) return err;
  const cause = e?.details?.cause;
  if (cause instanceof AppError) return cause;
  if (typeof e?.name !== 'string' || !e.name.startsWith('jsonld.')) return err;
  if (e.name === 'jsonld.ValidationError' && e.details?.event) {
    const event = e.details.event;
    const d = event.details ?? {};
    if (event.code === 'invalid property' && typeof d.property === 'string') return new UndefinedTermError(d.property);
    const what = ['type', 'id', 'property', 'value', 'language', 'reverseProperty'].map((k) => d[k]).find((v) => typeof v === 'string');
    return new BadRequestError(`JSON-LD safe mode refused the document: ${event.message ?? event.code}${what !== undefined ? ` (${JSON.stringify(what)})` : ''}`, 'jsonld_safe_mode');
  }
  if (e.details?.code === 'loading remote context failed' && typeof e.details.url === 'string') return new UnknownContextError(e.details.url);
  return new BadRequestError(`Invalid JSON-LD: ${e.message ?? e.name}`, 'invalid_jsonld');
}

/**
 * Safe mode: expands the document with jsonld's `safe: true`, which fails on the first term, type or
 * value that does not map to an absolute IRI (what JSON-LD would otherwise drop or keep relative,
 * unsigned). Run before anything is signed.
 */
export async function assertSafe(document: JsonObject, loader: JsonLdLoader): Promise<void> {
  try {
    await jsonld.expand(document, { documentLoader: loader, safe: true, base: null });
  } catch (err) {
    throw callerErrorOf(err);
  }
}
