import { JsonReply, RawRepresentation, walletScope, type OperationImpls } from '../http/contract';
import { ifNoneMatchHits } from '../http/conditional';
import { NotFoundError } from '../http/errors';
import { inSession } from '../store/session';
import type { PublicRefs } from '../tenancy/public-refs';
import type { ContextFiles } from './context-files';
import { parsePublicContextId } from './context-files';
import type { jsonldContracts, jsonldPublicContracts } from './contract';


export function jsonldOperations(files: ContextFiles): OperationImpls<typeof jsonldContracts> {
  return {
    createContextFile: ({ caller, body, baseUrl }) => files.put(walletScope(caller), baseUrl, body.context_file_id, body.file),
  };
}

/** A published file never changes (docs/jsonld.md): caches may keep it for a year without asking again. */
export const CONTEXT_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** The list grows as files are added. */
export const CONTEXT_LIST_CACHE_CONTROL = 'public, max-age=60';

const notFound = () => new NotFoundError('No such context file', 'context_file_not_found');

/**
 * The public reads: JSON-LD processors send no key. The wallet is the one the id's (or the query's)
 * public reference names, read in that wallet's session; one lookup and one item read per request.
 */
export function jsonldPublicOperations(files: ContextFiles, refs: PublicRefs): OperationImpls<typeof jsonldPublicContracts> {
  return {
    listContextFiles: async ({ query, baseUrl }) => {
      // The contract's list takes no parameter: naming no wallet lists no files, rather than every tenant's.
      if (query.public_ref === undefined) return new JsonReply([], { headers: { 'cache-control': CONTEXT_LIST_CACHE_CONTROL } });
      const scope = await refs.resolve(query.public_ref);
      if (!scope) throw new NotFoundError('No wallet has this public reference', 'wallet_not_found');
      const entries = await inSession(scope, () => files.list(scope, baseUrl));
      return new JsonReply(entries, { headers: { 'cache-control': CONTEXT_LIST_CACHE_CONTROL } });
    },
    getContextFile: async ({ params, request }) => {
      const parsed = parsePublicContextId(params.id);
      if (!parsed) throw notFound();
      const scope = await refs.resolve(parsed.ref);
      if (!scope) throw notFound();
      const stored = await inSession(scope, () => files.get(scope, parsed.contextFileId));
      if (!stored) throw notFound();
      // The digest stored with the file: it never changes, so neither does its tag.
      const etag = `"${stored.digest}"`;
      const headers = {
        etag,
        'cache-control': CONTEXT_CACHE_CONTROL,
        'last-modified': new Date(stored.created_at).toUTCString(),
        'access-control-expose-headers': 'ETag',
      };
      if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return new JsonReply(undefined, { status: 304, headers }) as never;
      return new RawRepresentation(stored.document, 'application/ld+json', headers);
    },
  };
}
