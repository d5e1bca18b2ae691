import { BadRequestError, NotFoundError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import { connectionFromItem, didcommKeys, type ConnectionRecord } from './records';

/** Sort fields of GET /api/v1/connections: key order (connection ids are ULIDs, so creation order). */
export const CONNECTION_SORT_FIELDS = ['created_at'] as const;
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 100;
/**
 * How deep a listing may reach (current-page × page-size, or item-count): DynamoDB has no offset, so
 * page n costs reading the n−1 pages before it; this bounds the reads of one request.
 */
export const MAX_LISTING_DEPTH = 1000;

export interface ConnectionListQuery {
  readonly 'sort-field'?: (typeof CONNECTION_SORT_FIELDS)[number] | undefined;
  readonly 'sort-direction'?: 'asc' | 'desc' | undefined;
  readonly 'page-size'?: number | undefined;
  readonly 'current-page'?: number | undefined;
  readonly 'item-count'?: number | undefined;
}

export class ConnectionService {
  constructor(private readonly store: ItemStore) {}

  /**
   * One page of the wallet's connections (contract 4.12): `item-count` caps how many connections the
   * listing covers in all (pages past it are empty); pages are numbered from 1.
   */
  async list(scope: TenantScope, q: ConnectionListQuery): Promise<ConnectionRecord[]> {
    const size = q['page-size'] ?? DEFAULT_PAGE_SIZE;
    const page = q['current-page'] ?? 1;
    const start = (page - 1) * size;
    const end = Math.min(start + size, q['item-count'] ?? Number.MAX_SAFE_INTEGER);
    if (start + size > MAX_LISTING_DEPTH && end > start) {
      throw new BadRequestError(`current-page × page-size reaches past the first ${MAX_LISTING_DEPTH} connections; list the other way round with sort-direction`, 'page_out_of_range', [
        { path: 'query.current-page', message: `at most ${MAX_LISTING_DEPTH} connections deep` },
      ]);
    }
    if (end <= start) return [];
    const items = await this.store.query(keys.walletPartition(scope), { skBeginsWith: didcommKeys.connectionPrefix, limit: end, descending: (q['sort-direction'] ?? 'desc') === 'desc' });
    return items.slice(start, end).map(connectionFromItem);
  }

  async get(scope: TenantScope, id: string): Promise<ConnectionRecord> {
    const item = await this.store.get(didcommKeys.connection(scope, id));
    if (!item) throw new NotFoundError('No such connection', 'connection_not_found');
    return connectionFromItem(item);
  }
}
