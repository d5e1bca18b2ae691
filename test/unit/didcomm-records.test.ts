import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import { ConnectionService, MAX_LISTING_DEPTH } from '../../lib/didcomm/connections';
import { didcommContracts } from '../../lib/didcomm/contract';
import { MessageService } from '../../lib/didcomm/messages';
import { didKeyFromVerkey } from '../../lib/didcomm/envelope';
import { InvitationService, type InvitationKeys } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { invitationFromUrl, OutOfBandInvitation } from '../../lib/didcomm/protocols/out-of-band/messages';
import { didcommKeys } from '../../lib/didcomm/records';
import { OutboxPublisher } from '../../lib/events/publisher';
import { keys, tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

const A = tenantScope('7');
const B = tenantScope('8');
const BASE = 'https://api.example.test/prod';

/** Real Ed25519 keys, as the key vault makes them (only the public half matters to invitations). */
function setup() {
  const store = new MemoryStore();
  const made: { walletId: string; verkey: string }[] = [];
  const vault: InvitationKeys = {
    createKey: async (walletId) => {
      const verkey = bs58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
      made.push({ walletId, verkey });
      return { verkey };
    },
  };
  const refs = { of: async (s: { walletId: string }) => `ref${s.walletId}`.padEnd(22, 'x') };
  const invitations = new InvitationService({ store, events: new OutboxPublisher(store), refs, keys: vault, now: () => new Date('2026-11-25T12:00:00Z') });
  return { store, made, invitations, connections: new ConnectionService(store), messages: new MessageService(store) };
}

const events = (store: MemoryStore, wallet: string) =>
  [...store.items.values()].filter((i) => i.PK === `W#${wallet}` && String(i.SK).startsWith('EVT#')).map((i) => (i.event as { type: string }).type);

describe('invitations', () => {
  test('an invitation is Out-of-Band 1.1 offering DID Exchange 1.1 then 1.0, with a key of its own at the wallet endpoint', async () => {
    const { store, made, invitations } = setup();
    await store.write([{ type: 'put', item: { ...keys.wallet(A), label: 'Acme Issuer' } }]);
    const out = await invitations.create(A, { multi_use: true, alias: 'shop', goal_code: 'issue-vc', goal: 'A credential' }, BASE);
    expect(out.invitation_id).toBe(1);
    const inv = OutOfBandInvitation.parse(out.invitation);
    expect(inv['@type']).toBe('https://didcomm.org/out-of-band/1.1/invitation');
    expect(inv.handshake_protocols).toEqual(['https://didcomm.org/didexchange/1.1', 'https://didcomm.org/didexchange/1.0']);
    expect(inv.label).toBe('Acme Issuer');
    expect(inv.services).toEqual([{ id: '#inline', type: 'did-communication', recipientKeys: [didKeyFromVerkey(made[0]!.verkey)], routingKeys: [], serviceEndpoint: `${BASE}/didcomm/ref7xxxxxxxxxxxxxxxxxx` }]);
    expect(made).toEqual([{ walletId: '7', verkey: expect.any(String) }]);
    // The URL carries the same invitation.
    expect(out.invitation_url.startsWith(`${BASE}/didcomm/ref7xxxxxxxxxxxxxxxxxx?oob=`)).toBe(true);
    expect(invitationFromUrl(out.invitation_url)).toEqual(out.invitation);
    // Stored with its key's lookup item and its event in the same write.
    const rec = await invitations.get(A, 1);
    expect(rec).toMatchObject({ invitation_id: 1, invitation_key: made[0]!.verkey, multi_use: true, alias: 'shop', state: 'await-response', invitation_msg_id: inv['@id'] });
    expect(await store.get(didcommKeys.recipientKey(A, made[0]!.verkey))).toMatchObject({ kind: 'invitation', invitation_id: 1 });
    expect(events(store, '7')).toEqual(['invitation.created']);
    expect(out.qr_png_base64).toBeUndefined();
  });

  test('did:key of a verkey is the multicodec Ed25519 form peers expect', () => {
    // Aries RFC 0360's example: the verkey and its did:key.
    expect(didKeyFromVerkey('8HH5gYEeNc3z7PYXmd54d4x6qAfCNrqQqEB3nS7Zfu7K')).toBe('did:key:z6MkmjY8GnV5i9YTDtPETC2uUAW6ejw3nk5mXF5yci5ab7th');
  });

  test('ids are sequential per wallet; a QR code is added when asked; the label given wins', async () => {
    const { invitations } = setup();
    expect((await invitations.create(A, {}, BASE)).invitation_id).toBe(1);
    expect((await invitations.create(B, {}, BASE)).invitation_id).toBe(1);
    const second = await invitations.create(A, { qr: true, label: 'Desk' }, BASE);
    expect(second.invitation_id).toBe(2);
    expect(second.invitation.label).toBe('Desk');
    expect(Buffer.from(second.qr_png_base64!, 'base64').subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect((await invitations.list(A)).map((i) => i.invitation_id)).toEqual([1, 2]);
    expect((await invitations.list(B)).map((i) => i.invitation_id)).toEqual([1]);
  });

  test("another wallet's invitation is not found; deleting removes it and its key lookup, with an event", async () => {
    const { store, made, invitations } = setup();
    await invitations.create(A, {}, BASE);
    await expect(invitations.get(B, 1)).rejects.toMatchObject({ status: 404, code: 'invitation_not_found' });
    await expect(invitations.delete(B, 1)).rejects.toMatchObject({ status: 404 });
    await invitations.delete(A, 1);
    await expect(invitations.get(A, 1)).rejects.toMatchObject({ status: 404 });
    expect(await store.get(didcommKeys.recipientKey(A, made[0]!.verkey))).toBeUndefined();
    expect(events(store, '7')).toEqual(['invitation.created', 'invitation.deleted']);
  });
});

describe('connections listing (contract 4.12)', () => {
  async function withConnections(n: number) {
    const s = setup();
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = `01KAAAAAAAAAAAAAAAAAAAA${String(i).padStart(3, '0')}`;
      ids.push(id);
      await s.store.write([{ type: 'put', item: { ...didcommKeys.connection(A, id), connection_id: id, state: 'active', rfc23_state: 'completed', their_role: 'invitee' } }]);
    }
    return { ...s, ids };
  }

  test('newest first by default; pages from 1; asc the other way round', async () => {
    const { connections, ids } = await withConnections(5);
    expect((await connections.list(A, {})).map((c) => c.connection_id)).toEqual([...ids].reverse());
    expect((await connections.list(A, { 'page-size': 2, 'current-page': 2 })).map((c) => c.connection_id)).toEqual([ids[2], ids[1]]);
    expect((await connections.list(A, { 'page-size': 2, 'current-page': 3, 'sort-direction': 'asc' })).map((c) => c.connection_id)).toEqual([ids[4]]);
    expect(await connections.list(A, { 'page-size': 2, 'current-page': 4 })).toEqual([]);
    expect(await connections.list(B, {})).toEqual([]);
  });

  test('item-count caps how many connections the listing covers', async () => {
    const { connections, ids } = await withConnections(5);
    expect((await connections.list(A, { 'item-count': 3, 'sort-direction': 'asc' })).map((c) => c.connection_id)).toEqual(ids.slice(0, 3));
    expect((await connections.list(A, { 'item-count': 3, 'page-size': 2, 'current-page': 2, 'sort-direction': 'asc' })).map((c) => c.connection_id)).toEqual([ids[2]]);
    expect(await connections.list(A, { 'item-count': 0 })).toEqual([]);
  });

  test(`a page deeper than ${MAX_LISTING_DEPTH} connections is a 400 before any read`, async () => {
    const { connections } = await withConnections(1);
    await expect(connections.list(A, { 'page-size': 100, 'current-page': 11 })).rejects.toMatchObject({ status: 400, code: 'page_out_of_range' });
    expect(await connections.list(A, { 'page-size': 100, 'current-page': 10 })).toEqual([]);
  });

  test("another wallet's connection is a 404", async () => {
    const { connections, ids } = await withConnections(1);
    expect((await connections.get(A, ids[0]!)).connection_id).toBe(ids[0]);
    await expect(connections.get(B, ids[0]!)).rejects.toMatchObject({ status: 404, code: 'connection_not_found' });
  });

  test('the query schema refuses what it does not know', () => {
    const q = didcommContracts.listConnections.query;
    for (const bad of [{ 'sort-field': 'their_label' }, { 'sort-direction': 'up' }, { 'page-size': '0' }, { 'page-size': '101' }, { 'current-page': '0' }, { 'item-count': '-1' }, { 'page-size': 'x' }])
      expect(q.safeParse(bad).success).toBe(false);
    expect(q.parse({ 'page-size': '10', 'current-page': '2', 'item-count': '15' })).toEqual({ 'page-size': 10, 'current-page': 2, 'item-count': 15 });
  });
});

describe('messages', () => {
  test("listed oldest first; another wallet's message is a 404", async () => {
    const { store, messages } = setup();
    for (const id of ['01KAAAAAAAAAAAAAAAAAAAAAA1', '01KAAAAAAAAAAAAAAAAAAAAAA2'])
      await store.write([{ type: 'put', item: { ...didcommKeys.message(A, id), message_id: id, contact_id: 'c', message: `m${id.at(-1)}`, direction: 'received', state: 'received' } }]);
    expect((await messages.list(A)).map((m) => m.message)).toEqual(['m1', 'm2']);
    expect((await messages.get(A, '01KAAAAAAAAAAAAAAAAAAAAAA2')).message).toBe('m2');
    await expect(messages.get(B, '01KAAAAAAAAAAAAAAAAAAAAAA2')).rejects.toMatchObject({ status: 404, code: 'message_not_found' });
    expect(await messages.list(B)).toEqual([]);
  });

  test('invitation ids in paths are positive integers', () => {
    const p = didcommContracts.getInvitation.params;
    for (const bad of ['0', '-1', '01', '1.5', 'abc', '99999999999']) expect(p.safeParse({ invitation_id: bad }).success).toBe(false);
    expect(p.parse({ invitation_id: '42' })).toEqual({ invitation_id: '42' });
  });
});
