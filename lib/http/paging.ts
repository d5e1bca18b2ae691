import * as z from 'zod';
import type { Item, ItemStore } from '../store/port';
import { BadRequestError } from './errors';

/**
 * Cursor paging that keeps a list's body a bare array (the contract's shape): without `limit` or
 * `cursor` a list route answers the whole list as before; with them, one page, and the next page's
 * cursor in `X-Next-Cursor` and an RFC 8288 `Link: <…>; rel="next"` header (absent on the last page).
 */
const MAX_PAGE = 100;

export const PAGING_QUERY = {
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).optional().meta({ description: `Page size (1–${MAX_PAGE}); without it and without cursor, the whole list` }),
  cursor: z.string().min(1).max(2048).optional().meta({ description: 'X-Next-Cursor of the previous page' }),
};

/** The page size when only a cursor is given. */
const DEFAULT_PAGE = MAX_PAGE;

/** A page of a list: the router answers `items` as the body and the cursor in the headers. */
export class Paged<T = unknown> {
  constructor(
    readonly items: T[],
    readonly next: string | null,
  ) {}
}

export function encodeCursor(key: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/**
 * The start key a cursor carries, if it is one this list could have issued: string attributes only,
 * exactly `attributes`, each passing its check (so a cursor never starts a read in another partition).
 */
export function decodeCursor(cursor: string, attributes: Readonly<Record<string, (v: string) => boolean>>): Record<string, string> {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  const names = Object.keys(attributes).sort();
  const ok =
    typeof key === 'object' &&
    key !== null &&
    JSON.stringify(Object.keys(key).sort()) === JSON.stringify(names) &&
    Object.entries(key as Record<string, unknown>).every(([k, v]) => typeof v === 'string' && attributes[k]!(v));
  if (!ok) throw new BadRequestError('cursor is not one this list issued', 'invalid_cursor', [{ path: 'query.cursor', message: 'not a cursor of this list' }]);
  return key as Record<string, string>;
}

/** Whether the caller asked for paging: then one page (`Paged`), else the whole list (the contract's answer). */
export async function listOrPage<T>(
  query: { readonly limit?: number | undefined; readonly cursor?: string | undefined },
  all: () => Promise<T[]>,
  page: (p: { limit: number; cursor: string | undefined }) => Promise<{ items: T[]; next: string | null }>,
): Promise<T[] | Paged<T>> {
  if (query.limit === undefined && query.cursor === undefined) return all();
  const out = await page({ limit: query.limit ?? DEFAULT_PAGE, cursor: query.cursor });
  return new Paged(out.items, out.next);
}

/**
 * One page of a partition's items under a sort-key prefix (a wallet's DIDs, supported credentials,
 * exchanges). Its cursor can only continue that same query: a cursor naming another partition or
 * another kind of item is refused before any read.
 */
export async function prefixPage(store: ItemStore, pk: string, prefix: string, page: { limit: number; cursor: string | undefined }): Promise<{ items: Item[]; next: string | null }> {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, { PK: (v) => v === pk, SK: (v) => v.startsWith(prefix) });
  const out = await store.queryPage(pk, { skBeginsWith: prefix, limit: page.limit, ...(after ? { after } : {}) });
  return { items: out.items, next: out.next ? encodeCursor(out.next) : null };
}
