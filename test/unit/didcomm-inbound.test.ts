import { generateKeyPair, packMessage, verkeyFromPublicKey } from '../../lib/didcomm/envelope';
import { InboundService, MAX_INBOUND_BYTES } from '../../lib/didcomm/inbound';
import { didcommKeys } from '../../lib/didcomm/records';
import { tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

const A = tenantScope('5');
const ENDPOINT = 'https://agents.example/didcomm/ref';

function setup() {
  const store = new MemoryStore();
  const sent: { body: string; group: string }[] = [];
  const inbound = new InboundService({ store, queue: { send: async (m) => void sent.push(...m.map(({ body, group }) => ({ body, group }))) } });
  const ours = generateKeyPair();
  const verkey = verkeyFromPublicKey(ours.publicKey);
  return { store, sent, inbound, verkey };
}

const envelopeFor = (verkeys: string[]) => JSON.parse(Buffer.from(packMessage({ '@type': 'https://didcomm.org/trust_ping/1.0/ping', '@id': '1' }, verkeys)).toString());

test('an envelope for one of the wallet’s keys is stored and queued in the group of that key', async () => {
  const { store, sent, inbound, verkey } = setup();
  await store.write([{ type: 'put', item: { ...didcommKeys.recipientKey(A, verkey), kind: 'connection', connection_id: 'c1' } }]);
  const other = verkeyFromPublicKey(generateKeyPair().publicKey);
  const out = await inbound.accept(A, envelopeFor([other, verkey]), ENDPOINT);
  expect(out).toMatchObject({ stored: true });
  const id = (out as { inboundId: string }).inboundId;
  expect(await store.get({ PK: 'W#5', SK: `DCIN#${id}` })).toMatchObject({ recipient: verkey, ttl: expect.any(Number) });
  expect(sent).toEqual([{ body: JSON.stringify({ wallet_id: '5', inbound_id: id }), group: `w5-${verkey}` }]);
});

test('an envelope for no key of this wallet is not stored (and answered alike); junk is a 400; no wallet is a 404', async () => {
  const { store, sent, inbound, verkey } = setup();
  const size = store.items.size;
  expect(await inbound.accept(A, envelopeFor([verkey]), ENDPOINT)).toEqual({ stored: false, reason: 'not_for_us' });
  await expect(inbound.accept(A, { protected: 'e30', iv: 'x', ciphertext: 'x', tag: 'x' }, ENDPOINT)).rejects.toMatchObject({ status: 400, code: 'invalid_envelope' });
  await expect(inbound.accept(A, 'not an object', ENDPOINT)).rejects.toMatchObject({ status: 400, code: 'invalid_envelope' });
  await expect(inbound.accept(A, { ...envelopeFor([verkey]), ciphertext: 'x'.repeat(MAX_INBOUND_BYTES) }, ENDPOINT)).rejects.toMatchObject({ status: 400 });
  await expect(inbound.accept(null, envelopeFor([verkey]), ENDPOINT)).rejects.toMatchObject({ status: 404 });
  expect(store.items.size).toBe(size);
  expect(sent).toEqual([]);
});

test('media types: the two DIDComm v1 types and JSON, parameters aside', () => {
  for (const ok of ['application/didcomm-envelope-enc', 'application/ssi-agent-wire', 'application/json; charset=utf-8', 'Application/DIDComm-Envelope-Enc']) expect(() => InboundService.checkMediaType(ok)).not.toThrow();
  for (const bad of ['', 'text/plain', 'application/didcomm-plain+json', 'application/x-www-form-urlencoded']) expect(() => InboundService.checkMediaType(bad)).toThrow(expect.objectContaining({ status: 415 }));
});
