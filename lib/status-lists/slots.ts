import { createHmac } from 'node:crypto';
import { memo } from '../memo';
import { listPermutation } from './permutation';
import type { DefinitionRecord } from './records';

/** Where the n-th entry (0-based) of a definition lives: list ⌊n / list_size⌋, at the list's permutation of n mod list_size. */
export interface Slot {
  readonly list: number;
  readonly index: number;
}

const permutations = memo(
  ({ secret, list, listSize }: { secret: string; list: number; listSize: number }) =>
    listPermutation(createHmac('sha256', Buffer.from(secret, 'base64url')).update(`list:${list}`).digest(), Math.log2(listSize)),
  1000,
  ({ secret, list, listSize }) => `${secret}|${list}|${listSize}`,
);

export function slotOf(def: Pick<DefinitionRecord, 'perm_secret' | 'list_size'>, n: number): Slot {
  const list = Math.floor(n / def.list_size);
  return { list, index: permutations({ secret: def.perm_secret, list, listSize: def.list_size })(n % def.list_size) };
}
