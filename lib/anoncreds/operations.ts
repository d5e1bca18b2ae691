import { BinaryRepresentation, JsonReply, RawRepresentation, walletScope, type OperationImpls } from '../http/contract';
import { ifNoneMatchHits } from '../http/conditional';
import { NotFoundError } from '../http/errors';
import { Paged } from '../http/paging';
import type { anoncredsContracts, anoncredsPublicContracts } from './contract';
import type { ObjectType } from './identifiers';
import type { PublicObjects } from './public-objects';
import type { AnonCredsRegistry } from './registry';

/** Lists always page (at most 100 a page): a wallet may keep 1,000 schemas. */
const DEFAULT_PAGE = 100;

export function anoncredsOperations(registry: AnonCredsRegistry): OperationImpls<typeof anoncredsContracts> {
  return {
    createSchema: ({ caller, body, baseUrl }) => registry.createSchema(walletScope(caller), baseUrl, body),
    listSchemas: async ({ caller, query, baseUrl }) => {
      const page = await registry.listSchemas(walletScope(caller), baseUrl, { limit: query.limit ?? DEFAULT_PAGE, cursor: query.cursor });
      return new Paged(page.items, page.next);
    },
    getSchema: ({ caller, params, baseUrl }) => registry.getSchema(walletScope(caller), baseUrl, params.id),
    createCredentialDefinition: ({ caller, body, baseUrl }) => registry.requestCredDef(walletScope(caller), baseUrl, body),
    listCredentialDefinitions: async ({ caller, query, baseUrl }) => {
      const page = await registry.listCredDefs(walletScope(caller), baseUrl, { limit: query.limit ?? DEFAULT_PAGE, cursor: query.cursor });
      return new Paged(page.items, page.next);
    },
    getCredentialDefinition: ({ caller, params, baseUrl }) => registry.getCredDef(walletScope(caller), baseUrl, params.id) as never,
  };
}

/**
 * Published objects never change (their id is their hash), but one stops being served when its DID
 * is deactivated: caches keep it a day, not a year.
 */
export const OBJECT_CACHE_CONTROL = 'public, max-age=86400';

/** A status list at a past timestamp can still gain a next version (its nextVersionId): a minute. */
export const STATUS_LIST_CACHE_CONTROL = 'public, max-age=60';

const NAMES: Record<ObjectType, string> = { schema: 'schema', credDef: 'credential definition', revRegDef: 'revocation registry definition' };

export function anoncredsPublicOperations(objects: PublicObjects): OperationImpls<typeof anoncredsPublicContracts> {
  const serve = (type: ObjectType) => async ({ params, baseUrl, request }: { params: { id: string; resource_id: string }; baseUrl: string; request: { headers: Readonly<Record<string, string>> } }) => {
    const found = await objects.get(baseUrl, params.id, type, params.resource_id);
    if (!found) throw new NotFoundError(`No such ${NAMES[type]} under this DID`, 'anoncreds_object_not_found');
    // The resource id is the object's hash: a strong validator as it is.
    const etag = `"${found.resourceId}"`;
    const headers = { etag, 'cache-control': OBJECT_CACHE_CONTROL, 'access-control-expose-headers': 'ETag' };
    if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return new JsonReply(undefined, { status: 304, headers }) as never;
    return new RawRepresentation(`{"resource":${found.document},"resourceMetadata":${JSON.stringify(found.metadata)}}`, 'application/json', headers) as never;
  };
  return {
    getSchemaResource: serve('schema'),
    getCredentialDefinitionResource: serve('credDef'),
    getRevocationRegistryResource: serve('revRegDef'),
    // A status list changes with each revocation: never cached by shared caches for long.
    getRevocationStatusListResource: async ({ params, baseUrl }) => {
      const found = await objects.statusList(baseUrl, params.id, params.resource_id, params.timestamp);
      if (!found) throw new NotFoundError('No revocation status list of this registry under this DID at that time', 'anoncreds_object_not_found');
      const body = `{"resource":${found.document},"resourceMetadata":${JSON.stringify({ previousVersionId: found.previous, nextVersionId: found.next })}}`;
      return new RawRepresentation(body, 'application/json', { 'cache-control': STATUS_LIST_CACHE_CONTROL }) as never;
    },
    getTailsFile: async ({ params, baseUrl, request }) => {
      const file = await objects.tails(baseUrl, params.id, params.tails_hash);
      if (!file) throw new NotFoundError('No such tails file under this DID', 'anoncreds_object_not_found');
      // The tails hash is the file's hash: a strong validator as it is.
      const etag = `"${params.tails_hash}"`;
      const headers = { etag, 'cache-control': OBJECT_CACHE_CONTROL, 'access-control-expose-headers': 'ETag' };
      if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return new JsonReply(undefined, { status: 304, headers }) as never;
      return new BinaryRepresentation(file, 'application/octet-stream', headers) as never;
    },
  };
}
