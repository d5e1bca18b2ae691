// Public resolution of the registry's objects (the did:web AnonCreds method): the path names the
// did:web DID (its random last segment, never a wallet) and the object's resource id. The DID is
// found through the PublicDids index — as the DID resolver finds it — and its item's partition names
// the wallet whose session then reads one item. An object is served only under the DID that issued
// it, only while that DID is published and not deactivated (the DID's own item, method `web`: the
// DIDComm service item under the same lookup value has method `didcomm-service`). Two reads per request, whatever is asked.
import { didWeb } from '../dids/methods';
import { publicLookup } from '../dids/records';
import { TABLE, walletPartitionKey } from '../service/resources';
import { comparableDid, tenantScope, WALLET_ID } from '../store/keys';
import type { ItemStore } from '../store/port';
import { inSession } from '../store/session';
import { RESOURCE_ID, type ObjectType } from './identifiers';
import { registryKeys } from './registry';

export interface PublicObject {
  /** The object's JSON as stored (compact). */
  readonly document: string;
  readonly resourceId: string;
}

export class PublicObjects {
  constructor(private readonly store: ItemStore) {}

  async get(baseUrl: string, didWebId: string, type: ObjectType, resourceId: string): Promise<PublicObject | undefined> {
    if (!RESOURCE_ID.test(resourceId)) return undefined;
    const did = didWeb(baseUrl, didWebId);
    const items = await this.store.query(publicLookup(did), { index: TABLE.publicDids.name, limit: 4 });
    const item = items.find((i) => typeof i.qualified === 'string' && comparableDid(i.qualified) === comparableDid(did) && i.method === 'web');
    if (!item || item.deactivated_at) return undefined;
    const walletId = String(item[TABLE.partitionKey]).slice(walletPartitionKey('').length);
    if (!WALLET_ID.test(walletId)) return undefined;
    const scope = tenantScope(walletId);
    const stored = await inSession(scope, () => this.store.get(type === 'schema' ? registryKeys.schema(scope, resourceId) : registryKeys.credDefPublic(scope, resourceId)));
    if (!stored || typeof stored.document !== 'string' || comparableDid(String(stored.issuer_id)) !== comparableDid(did)) return undefined;
    return { document: stored.document, resourceId };
  }
}
