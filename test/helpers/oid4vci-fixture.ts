import { DidService } from '../../lib/dids/service';
import { memoryPublicDidDidcomm } from './didcomm-memory-vault';
import { OutboxPublisher } from '../../lib/events/publisher';
import type { EventEnvelope } from '../../lib/events/envelope';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { ExchangeService, exchangeFromItem } from '../../lib/oid4vci/exchanges';
import { IssuerSecretSource } from '../../lib/oid4vci/protocol/issuer-secrets';
import { IssuerProtocol, type ProtocolRequest } from '../../lib/oid4vci/protocol/service';
import { oid4vciKeys, PRE_AUTHORIZED_GRANT } from '../../lib/oid4vci/records';
import { draftFromSdJwt, SupportedCredentialService } from '../../lib/oid4vci/supported';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { StatusAllocator } from '../../lib/status-lists/allocation';
import { keys, tenantScope } from '../../lib/store/keys';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { TaaService } from '../../lib/taa/service';
import { MemoryStore } from './memory-store';

export const BASE = 'https://issuer.example.com';
export const scope = tenantScope('7');
/** Wallet 7's public reference: what its public URLs carry instead of its id. */
export const REF = 'Wr7_public-reference0A';
export const ISSUER = `${BASE}/oid4vci/${REF}`;

/** Wallet 7's record as tenancy creates it (its label and public reference are what the issuer reads). */
export async function putWallet(store: MemoryStore, extra: Record<string, unknown> = {}): Promise<void> {
  await store.write([{ type: 'put', item: { ...keys.wallet(scope), type: 'wallet', wallet_id: '7', wallet_name: 'w7', label: 'w7', public_ref: REF, ...extra } }]);
  await store.write([{ type: 'put', item: { ...keys.publicRef(REF), wallet_id: '7' } }]);
}

/**
 * The issuer's services on an in-memory store, in-process (no HTTP): a did:key issuer, one SD-JWT
 * configuration `Pid`, and helpers to make offers and call the protocol endpoints as the router would.
 */
export async function oid4vciFixture(opts: { store?: MemoryStore; now?: () => Date; status?: boolean } = {}) {
  const store = opts.store ?? new MemoryStore();
  const now = opts.now ?? (() => new Date());
  await putWallet(store);
  const refs = new PublicRefs(store);
  const keyManager = new LocalKeyManager(store, new LocalSecretDeriver('ab'.repeat(32)));
  const dids = new DidService({ didcomm: memoryPublicDidDidcomm(store), store, keyManager, taa: new TaaService(store, undefined), indyNamespace: 't', limits: { maxDids: 100, maxCreationsPerMinute: 100 } });
  const events = new OutboxPublisher(store, now);
  const supported = new SupportedCredentialService({ store, now });
  const config = await supported.create(scope, draftFromSdJwt({ id: 'Pid', vct: 'urn:pid', claims: { given_name: { value_type: 'string' } } }));
  const did = await dids.create(scope, { method: 'key', baseUrl: BASE });
  const status = opts.status ? new StatusAllocator({ store, events, refs, now }) : null;
  const exchanges = new ExchangeService({ store, events, refs, now, ...(status ? { status } : {}) });
  // The wallet's token and nonce keys, as the protocol derives them (tests read them to forge or decode).
  const secrets = new IssuerSecretSource(new LocalSecretDeriver('cd'.repeat(32)));
  const protocol = new IssuerProtocol({ store, events, keyManager, secrets, status, now });

  const offer = async (extra: { pin?: string; supported_cred_id?: string } = {}) => {
    const out = await exchanges.issue(scope, { supported_cred_id: config.supported_cred_id, credential_subject: { given_name: 'E' }, did: did.did, ...extra }, BASE);
    return { code: out.offer.grants[PRE_AUTHORIZED_GRANT]['pre-authorized_code'], exchangeId: out.exchange.exchange_id };
  };
  const request = (path: string, headers: Record<string, string> = {}): ProtocolRequest => ({ method: 'POST', url: `${ISSUER}/${path}`, headers });
  const token = (code: string, opts: { txCode?: string; headers?: Record<string, string>; form?: Record<string, string> } = {}) =>
    protocol.token(scope, ISSUER, request('token', { 'content-type': 'application/x-www-form-urlencoded', ...opts.headers }), {
      grant_type: PRE_AUTHORIZED_GRANT,
      'pre-authorized_code': code,
      ...(opts.txCode !== undefined ? { tx_code: opts.txCode } : {}),
      ...opts.form,
    });
  const credential = (accessToken: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    protocol.credential(scope, ISSUER, request('credential', { authorization: `Bearer ${accessToken}`, ...headers }), body);
  const exchange = async (id: string) => exchangeFromItem((await store.get(oid4vciKeys.exchange(scope, id)))!);
  const eventsOf = (type: string) =>
    [...store.items.values()].filter((i) => i.PK === 'W#7' && String(i.SK).startsWith('EVT#')).map((i) => i.event as EventEnvelope).filter((e) => e.type === type);
  return { store, dids, did, supported, config, exchanges, protocol, secrets, offer, token, credential, exchange, events: eventsOf, request, keyManager, publisher: events, refs };
}
