import { NotFoundError } from '../http/errors';
import { prefixPage } from '../http/paging';
import { keys, type TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import { didcommKeys, messageFromItem, type MessageRecord } from './records';

/** Stored basic messages, both directions (contract 4.8), oldest first (ids are ULIDs). */
export class MessageService {
  constructor(private readonly store: ItemStore) {}

  async list(scope: TenantScope): Promise<MessageRecord[]> {
    return (await this.store.query(keys.walletPartition(scope), { skBeginsWith: didcommKeys.messagePrefix})).map(messageFromItem);
  }

  async listPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }): Promise<{ items: MessageRecord[]; next: string | null }> {
    const out = await prefixPage(this.store, keys.walletPartition(scope), didcommKeys.messagePrefix, page);
    return { items: out.items.map(messageFromItem), next: out.next };
  }

  async get(scope: TenantScope, id: string): Promise<MessageRecord> {
    const item = await this.store.get(didcommKeys.message(scope, id));
    if (!item) throw new NotFoundError('No such message', 'message_not_found');
    return messageFromItem(item);
  }
}
