import { DIDCOMM_SERVICE_MARKER, DIDCOMM_SERVICE_METHODS, didcommServiceKey, type PublicDidServices } from '../dids/didcomm-service';
import { publicLookup, type DidRecord } from '../dids/records';
import type { TenantScope } from '../store/keys';
import type { ItemStore, WriteOp } from '../store/port';
import type { WalletRefs } from '../tenancy/public-refs';
import type { AgentKeys } from './agent';
import { publicKeyFromVerkey } from './envelope';
import { didcommKeys } from './records';

/**
 * The wallet's DIDComm service on its public DID (lib/dids/didcomm-service.ts), kept in step by
 * set-public-did. One DIDComm key per wallet, made on first use and kept when the public DID changes
 * (the service moves, the key stays): its lookup item (`kind: 'public-did'`) names the DID it
 * currently serves, so a request naming an earlier public DID is dropped. For a public DID of a method
 * without a service (did:key, did:jwk) the service item leaves the index and the lookup names no DID.
 */
export class PublicDidDidcomm implements PublicDidServices {
  constructor(private readonly deps: { readonly store: ItemStore; readonly keys: AgentKeys; readonly refs: WalletRefs; readonly now?: () => Date }) {}

  async writesFor(scope: TenantScope, did: Pick<DidRecord, 'qualified' | 'method'>): Promise<WriteOp[]> {
    const key = didcommServiceKey(scope, await this.deps.refs.of(scope));
    const current = await this.deps.store.get(key, { consistent: true });
    const serves = DIDCOMM_SERVICE_METHODS.includes(did.method);
    const existing = typeof current?.verkey === 'string' ? current.verkey : undefined;
    if (serves ? current?.qualified === did.qualified : !existing || current?.PDID === undefined) return [];
    // A key made here by a request that then loses the race (the condition below) stays sealed and unused.
    const verkey = existing ?? (await this.deps.keys.createKey(scope.walletId)).verkey;
    const at = (this.deps.now?.() ?? new Date()).toISOString();
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyFromVerkey(verkey)).toString('base64url') };
    const published = serves ? { PDID: publicLookup(did.qualified), qualified: did.qualified, method: DIDCOMM_SERVICE_MARKER } : {};
    return [
      {
        type: 'put',
        item: { ...key, type: 'didcomm_public_service', verkey, public_jwk: jwk, ...published, updated_at: at },
        // The wallet keeps one key: a concurrent first use loses here and goes again.
        condition: existing ? { equals: { verkey } } : 'not_exists',
      },
      { type: 'put', item: { ...didcommKeys.recipientKey(scope, verkey), type: 'didcomm_key', kind: 'public-did', ...(serves ? { did: did.qualified } : {}) } },
    ];
  }
}
