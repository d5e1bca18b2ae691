import { JsonReply, RawRepresentation, walletScope, type OperationImpls } from '../http/contract';
import { ifNoneMatchHits } from '../http/conditional';
import { AppError, NotFoundError } from '../http/errors';
import { listOrPage } from '../http/paging';
import { inSession } from '../store/session';
import type { PublicRefs } from '../tenancy/public-refs';
import type { statusListContracts, statusListPublicContracts } from './contract';
import { MEDIA_TYPES, PUBLICATION, type StatusListPublisher } from './publication';
import type { ListType } from './records';
import type { StatusListService } from './service';

export function statusListOperations(service: StatusListService): OperationImpls<typeof statusListContracts> {
  return {
    listStatusListDefs: async ({ caller, query }) => {
      const { limit, cursor, ...filter } = query;
      return listOrPage(
        query,
        () => service.list(walletScope(caller), filter),
        (p) => service.listPage(walletScope(caller), p, filter),
      );
    },
    createStatusListDef: ({ caller, body, baseUrl }) => service.create(walletScope(caller), body, baseUrl),
    getStatusListDef: async ({ caller, params }) => [await service.get(walletScope(caller), params.id)],
    deleteStatusListDef: ({ caller, params, body }) => service.delete(walletScope(caller), params.id, body.recursive_delete === true),
    publishStatusListDef: ({ caller, params, body }) => service.publish(walletScope(caller), params.def_id, body),
    getStatusListEntry: ({ caller, params, query }) => service.getEntry(walletScope(caller), params.credential_exchange_id, query.definition_id),
    revokeStatusListEntry: ({ caller, params, query, body }) => service.setStatus(walletScope(caller), params.credential_exchange_id, query.definition_id, body.status),
  };
}

/**
 * The public lists: the wallet is the one the path's public reference names (a reference that names
 * none, an old sequential id included, is a 404 before any session). Cacheable by anyone (`public`)
 * for the list's ttl, never past its expiry; `If-None-Match` gets a 304.
 */
export function statusListPublicOperations(publisher: StatusListPublisher, refs: PublicRefs, now: () => Date = () => new Date()): OperationImpls<typeof statusListPublicContracts> {
  const serve = async (params: { public_ref: string; def_id: string; list: string }, query: { time?: string | undefined }, headers: Readonly<Record<string, string>>, format: ListType) => {
    if (query.time !== undefined) throw new AppError(501, 'historical_status_list_unsupported', 'Historical status lists are not kept: ask without time for the current list');
    const scope = await refs.resolve(params.public_ref);
    if (!scope) throw new NotFoundError('No such status list', 'status_list_not_found');
    const p = await inSession(scope, () => publisher.serve(scope, params.def_id, Number(params.list), format));
    const maxAge = Math.max(0, Math.min(PUBLICATION.ttlSeconds, p.expires_at - Math.floor(now().getTime() / 1000)));
    const cache = {
      etag: p.etag,
      'cache-control': `public, max-age=${maxAge}`,
      'last-modified': new Date(p.issued_at * 1000).toUTCString(),
      // Browser verifiers may read the ETag to revalidate.
      'access-control-expose-headers': 'ETag',
    };
    if (ifNoneMatchHits(headers['if-none-match'], p.etag)) return new JsonReply(undefined, { status: 304, headers: cache }) as never;
    return new RawRepresentation(p.token, MEDIA_TYPES[format], cache);
  };
  return {
    getIetfStatusList: ({ params, query, request }) => serve(params, query, request.headers, 'ietf'),
    getW3cStatusList: ({ params, query, request }) => serve(params, query, request.headers, 'w3c'),
  };
}
