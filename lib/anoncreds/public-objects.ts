// Public resolution of the registry's objects (the did:web AnonCreds method): the path names the
// did:web DID (its random last segment, never a wallet) and the object's resource id. The DID is
// found through the PublicDids index — as the DID resolver finds it — and its item's partition names
// the wallet whose session then reads. An object is served only under the DID that issued it, only
// while that DID is published and not deactivated (the DID's own item, method `web`: the DIDComm
// service item under the same lookup value has method `didcomm-service`). Bounded work per request:
// the index query, then one item read (schema, definition, registry), three small queries (a status
// list at a timestamp) or one query of at most ⌈(2L+1)/1,024⌉ items (a tails file).
import { didWeb } from '../dids/methods';
import { publicLookup } from '../dids/records';
import { TABLE, walletPartitionKey } from '../service/resources';
import { comparableDid, tenantScope, WALLET_ID, type TenantScope } from '../store/keys';
import type { ItemStore } from '../store/port';
import { inSession } from '../store/session';
import { RESOURCE_ID, statusListEndpoint, type ObjectType } from './identifiers';
import { REGISTRY_LIMITS, registryKeys } from './registry';
import { RevocationRegistryStore, revRegKeys, TAILS_PER_CHUNK } from './revocation-registry';

export interface PublicObject {
  /** The object's JSON as stored (compact). */
  readonly document: string;
  readonly resourceId: string;
  /** The resolution's `resourceMetadata`. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** Most chunks a tails file of the largest registry has. */
const MAX_TAILS_CHUNKS = Math.ceil((2 * REGISTRY_LIMITS.maxRegistrySize + 1) / TAILS_PER_CHUNK);

export class PublicObjects {
  readonly #registries: RevocationRegistryStore;

  constructor(private readonly store: ItemStore) {
    this.#registries = new RevocationRegistryStore(store);
  }

  /** The wallet of a published, active did:web DID of this service, and the DID. */
  async #issuer(baseUrl: string, didWebId: string): Promise<{ scope: TenantScope; did: string } | undefined> {
    const did = didWeb(baseUrl, didWebId);
    const items = await this.store.query(publicLookup(did), { index: TABLE.publicDids.name, limit: 4 });
    const item = items.find((i) => typeof i.qualified === 'string' && comparableDid(i.qualified) === comparableDid(did) && i.method === 'web');
    if (!item || item.deactivated_at) return undefined;
    const walletId = String(item[TABLE.partitionKey]).slice(walletPartitionKey('').length);
    if (!WALLET_ID.test(walletId)) return undefined;
    return { scope: tenantScope(walletId), did };
  }

  async get(baseUrl: string, didWebId: string, type: ObjectType, resourceId: string): Promise<PublicObject | undefined> {
    if (!RESOURCE_ID.test(resourceId)) return undefined;
    const issuer = await this.#issuer(baseUrl, didWebId);
    if (!issuer) return undefined;
    const { scope, did } = issuer;
    const key = type === 'schema' ? registryKeys.schema(scope, resourceId) : type === 'credDef' ? registryKeys.credDefPublic(scope, resourceId) : revRegKeys.registry(scope, resourceId);
    const stored = await inSession(scope, () => this.store.get(key));
    if (!stored || typeof stored.document !== 'string' || comparableDid(String(stored.issuer_id)) !== comparableDid(did)) return undefined;
    // The registry definition names where its status lists are: the spec's field and the one Credo's registry reads.
    const endpoint = statusListEndpoint(baseUrl, didWebId, resourceId);
    const metadata: Record<string, string> = type === 'revRegDef' ? { revocationStatusListEndpoint: endpoint, statusListEndpoint: endpoint } : {};
    return { document: stored.document, resourceId, metadata };
  }

  /** The status list of a registry in force at `timestamp` (Unix seconds), with the neighbouring versions' timestamps. */
  async statusList(baseUrl: string, didWebId: string, resourceId: string, timestamp: number): Promise<{ document: string; previous: string; next: string } | undefined> {
    if (!RESOURCE_ID.test(resourceId)) return undefined;
    const issuer = await this.#issuer(baseUrl, didWebId);
    if (!issuer) return undefined;
    const { scope, did } = issuer;
    const found = await inSession(scope, () => this.#registries.statusListAt(scope, resourceId, timestamp));
    if (!found || comparableDid(String((JSON.parse(found.document) as { issuerId: string }).issuerId)) !== comparableDid(did)) return undefined;
    return found;
  }

  /** A tails file by its hash: the bytes as the registry definition's tailsHash names them. */
  async tails(baseUrl: string, didWebId: string, tailsHash: string): Promise<Buffer | undefined> {
    if (!RESOURCE_ID.test(tailsHash)) return undefined;
    const issuer = await this.#issuer(baseUrl, didWebId);
    if (!issuer) return undefined;
    const { scope, did } = issuer;
    const found = await inSession(scope, () => this.#registries.tails(scope, tailsHash, MAX_TAILS_CHUNKS));
    if (!found || comparableDid(found.issuerId) !== comparableDid(did)) return undefined;
    return found.file;
  }
}
