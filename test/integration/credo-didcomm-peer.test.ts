/**
 * The independent DIDComm peer the service's interop tests use (test/helpers/credo-didcomm.ts),
 * proved against itself and against our envelope module: two Credo agents connect over DID Exchange
 * from an Out-of-Band invitation and exchange basic messages; Credo unpacks what packMessage made
 * and we unpack what Credo packed.
 */
import { DidCommBasicMessage, DidCommEnvelopeService } from '@credo-ts/didcomm';
import { Kms } from '@credo-ts/core';
import { packMessage, unpackMessage, generateKeyPair, verkeyFromPublicKey, publicKeyFromVerkey } from '../../lib/didcomm/envelope';
import { startCredoPeer, type CredoPeer } from '../helpers/credo-didcomm';

let alice: CredoPeer;
let bob: CredoPeer;

beforeAll(async () => {
  [alice, bob] = await Promise.all([startCredoPeer({ label: 'alice' }), startCredoPeer({ label: 'bob' })]);
});
afterAll(async () => {
  await Promise.all([alice?.stop(), bob?.stop()]);
});

test('two Credo peers connect over DID Exchange (OOB invitation) and exchange basic messages both ways', async () => {
  const { invitationUrl, outOfBandId } = await alice.createInvitation();
  expect(invitationUrl.startsWith(alice.endpoint)).toBe(true);
  const { connectionId: bobSide } = await bob.receiveInvitationUrl(invitationUrl);
  const bobConnection = await bob.waitForConnection((c) => c.id === bobSide);
  const aliceConnection = await alice.waitForConnection((c) => c.outOfBandId === outOfBandId);
  expect(bobConnection.theirLabel).toBe('alice');
  expect(aliceConnection.theirLabel).toBe('bob');

  await bob.sendBasicMessage(bobSide, 'hello alice');
  expect(await alice.waitForBasicMessage((c) => c === 'hello alice')).toEqual({ content: 'hello alice', connectionId: aliceConnection.id });
  await alice.sendBasicMessage(aliceConnection.id, 'hello bob');
  expect(await bob.waitForBasicMessage((c) => c === 'hello bob')).toEqual({ content: 'hello bob', connectionId: bobSide });
});

describe('our envelopes and Credo’s', () => {
  async function credoKey(peer: CredoPeer) {
    // Imported under its legacy key id (the verkey), which Credo's envelope service looks up for a
    // recipient key that belongs to no connection or invitation.
    const kms = peer.agent.context.dependencyManager.resolve(Kms.KeyManagementApi);
    const pair = generateKeyPair();
    const jwk = Kms.PublicJwk.fromPublicKey({ kty: 'OKP', crv: 'Ed25519', publicKey: pair.publicKey }) as Kms.PublicJwk<Kms.Ed25519PublicJwk>;
    const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');
    await kms.importKey({ privateJwk: { kty: 'OKP', crv: 'Ed25519', x: b64(pair.publicKey), d: b64(pair.seed), kid: jwk.legacyKeyId } });
    jwk.keyId = jwk.legacyKeyId;
    return { jwk, verkey: verkeyFromPublicKey(pair.publicKey) };
  }

  test.each([['authcrypt'], ['anoncrypt']])('%s: Credo unpacks what packMessage made, and we unpack what Credo packed', async (mode) => {
    const envelopes = alice.agent.context.dependencyManager.resolve(DidCommEnvelopeService);
    const recipient = await credoKey(alice);
    const ours = generateKeyPair();
    const message = { '@type': 'https://didcomm.org/basicmessage/1.0/message', '@id': `m-${mode}`, content: `from us, ${mode}`, sent_time: new Date().toISOString() };

    const packed = JSON.parse(Buffer.from(packMessage(message, [recipient.verkey], mode === 'authcrypt' ? ours : undefined)).toString());
    const unpacked = await envelopes.unpackMessage(alice.agent.context, packed);
    expect(unpacked.plaintextMessage).toEqual(message);
    if (mode === 'authcrypt') expect(verkeyFromPublicKey((unpacked.senderKey as Kms.PublicJwk<Kms.Ed25519PublicJwk>).publicKey.publicKey)).toBe(verkeyFromPublicKey(ours.publicKey));
    else expect(unpacked.senderKey).toBeUndefined();

    const ourJwk = Kms.PublicJwk.fromPublicKey({ kty: 'OKP', crv: 'Ed25519', publicKey: ours.publicKey }) as Kms.PublicJwk<Kms.Ed25519PublicJwk>;
    const reply = new DidCommBasicMessage({ content: `from credo, ${mode}` });
    const credoPacked = await envelopes.packMessage(alice.agent.context, reply, { recipientKeys: [ourJwk], routingKeys: [], senderKey: mode === 'authcrypt' ? recipient.jwk : null });
    const back = unpackMessage(credoPacked, ours);
    expect(back.message).toMatchObject({ '@type': 'https://didcomm.org/basicmessage/1.0/message', content: `from credo, ${mode}` });
    expect(back.senderVerkey).toBe(mode === 'authcrypt' ? recipient.verkey : undefined);
    expect(back.recipientVerkey).toBe(verkeyFromPublicKey(ours.publicKey));
    expect(publicKeyFromVerkey(back.recipientVerkey)).toEqual(ours.publicKey);
  });
});
