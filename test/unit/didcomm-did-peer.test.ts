import { Kms, PeerDidResolver, createPeerDidDocumentFromServices, didDocumentToNumAlgo2Did, didDocumentToNumAlgo4Did, type Agent, type DidDocument } from '@credo-ts/core';
import { DidPeerError, createDidPeer4, resolveAttachedDidDoc, resolveDidPeer, shortFormOf } from '../../lib/didcomm/did-peer';
import { generateKeyPair, verkeyFromDidKey, verkeyFromPublicKey } from '../../lib/didcomm/envelope';
import { createCredoAgent } from '../helpers/credo-holder';

// Test vectors: the DIDs of Credo's published did:peer fixtures
// (packages/core/src/modules/dids/methods/peer/__tests__/__fixtures__/didPeer2Ez6L.json, didPeer4zQmUJdJ.json,
// didPeer4zQmd8Cp.json), resolved here by Credo's own resolver for comparison.
const CREDO_PEER2 =
  'did:peer:2.Ez6LSbysY2xFMRpGMhb7tFTLMpeuPRaqaWM1yECx2AtzE3KCc.Vz6MkqRYqQiSgvZQdnBytw86Qbs2ZWUkGv22od935YF4s8M7V.Vz6MkgoLTnTypo3tDRwCkZXSccTPHRLhF4ZnjhueYAFpEX6vg.SeyJ0IjoiZG0iLCJzIjoiaHR0cHM6Ly9leGFtcGxlLmNvbS9lbmRwb2ludCIsInIiOlsiZGlkOmV4YW1wbGU6c29tZW1lZGlhdG9yI3NvbWVrZXkiXSwiYSI6WyJkaWRjb21tL3YyIiwiZGlkY29tbS9haXAyO2Vudj1yZmM1ODciXX0';
const CREDO_PEER4_V1 =
  'did:peer:4zQmZJVsg5xdo5gVX3HCEvwp29MxrCMvnBnPM2TTYqXjLseo:z72PjTR6nroWmhFJuXs5WUQ8NxVGvXQSLQKxsztQRxqcbNMndPt2GXVKX3fjbRX9h9qfjZWUBvvnmceMz1hyvdfdBnADMJQNeCcdivUypvyiFWkgq8DCTkjcQkjZqc7dubX5E8cd2npbrXbfmkw9sRPGi7vFxfdLCKiskUW2mpksEXwXvxZ8VFd56ZPqfStaajERmqiSU9vSxWfXC8SrwbcaHWm9KAWE5yYHKvUCtNqDB7VxNw5ApwkqpLajn58UANRHgCz2yf5bTvfRCWuUtdFe3n8aroc6chpMtS6j3RwxsL12kSjnWm24vEdsqq3KbGVanLeEFQ1HjKBFxwRsJrxGfT7wVPUbKu7hWemuf6cz2tZ5kPhAHVxWjahHNTATZXKzM8oDEn3PYC34pjkgZP6BeLeeAyK1hzcjCghaN6bdpTbYhSUqWKi6oaccX11gS6JLAt1ryUzG3sCeurVTUVrf1GntJpGkiPWRQhU66MpT4K7L7kZgrmcF8eL95pSbtZqhkQCyrsurKaVmNfwrCfNRr9JzxnXprbmjs4tikDVfSBk4TkDKcXck1YkZ6CjA8S1yHWKo7pGGfw3425SGAfXXLrYA29tAaQyxDKGjsFWorwKMUGdRA8psZgnFptcrwi1moAdn7cTExBFPr9PSk';
const CREDO_PEER4_V2 =
  'did:peer:4zQmd8CpeFPci817KDsbSAKWcXAE2mjvCQSasRewvbSF54Bd:z2M1k7h4psgp4CmJcnQn2Ljp7Pz7ktsd7oBhMU3dWY5s4fhFNj17qcRTQ427C7QHNT6cQ7T3XfRh35Q2GhaNFZmWHVFq4vL7F8nm36PA9Y96DvdrUiRUaiCuXnBFrn1o7mxFZAx14JL4t8vUWpuDPwQuddVo1T8myRiVH7wdxuoYbsva5x6idEpCQydJdFjiHGCpNc2UtjzPQ8awSXkctGCnBmgkhrj5gto3D4i3EREXYq4Z8r2cWGBr2UzbSmnxW2BuYddFo9Yfm6mKjtJyLpF74ytqrF5xtf84MnGFg1hMBmh1xVx1JwjZ2BeMJs7mNS8DTZhKC7KH38EgqDtUZzfjhpjmmUfkXg2KFEA3EGbbVm1DPqQXayPYKAsYPS9AyKkcQ3fzWafLPP93UfNhtUPL8JW5pMcSV3P8v6j3vPXqnnGknNyBprD6YGUVtgLiAqDBDUF3LSxFQJCVYYtghMTv8WuSw9h1a1SRFrDQLGHE4UrkgoRvwaGWr64aM87T1eVGkP5Dt4L1AbboeK2ceLArPScrdYGTpi3BpTkLwZCdjdiFSfTy9okL1YNRARqUf2wm8DvkVGUU7u5nQA3ZMaXWJAewk6k1YUxKd7LvofGUK4YEDtoxN5vb6r1Q2godrGqaPkjfL3RoYPpDYymf9XhcgG8Kx3DZaA6cyTs24t45KxYAfeCw4wqUpCH9HbpD78TbEUr9PPAsJgXBvBj2VVsxnr7FKbK4KykGcg1W8M1JPz21Z4Y72LWgGQCmixovrkHktcTX1uNHjAvKBqVD5C7XmVfHgXCHj7djCh3vzLNuVLtEED8J1hhqsB1oCBGiuh3xXr7fZ9wUjJCQ1HYHqxLJKdYKtoCiPmgKM7etVftXkmTFETZmpM19aRyih3bao76LdpQtbw636r7a3qt8v4WfxsXJetSL8c7t24SqQBcAY89FBsbEnFNrQCMK3JEseKHVaU388ctvRD45uQfe5GndFxthj4iSDomk4uRFd1uRbywoP1tRuabHTDX42UxPjz';

let agent: Agent;
beforeAll(async () => {
  agent = await createCredoAgent({});
});
afterAll(async () => {
  await agent.shutdown();
});

async function credoResolve(did: string): Promise<DidDocument> {
  const result = await new PeerDidResolver().resolve(agent.context, did);
  if (!result.didDocument) throw new Error(`credo could not resolve ${did}: ${result.didResolutionMetadata.message}`);
  return result.didDocument;
}

/** Credo's view: Ed25519 authentication keys as verkeys, and each service's endpoint. */
function credoSummary(doc: DidDocument) {
  const verkeys = (doc.authentication ?? []).map((a) => {
    const method = typeof a === 'string' ? doc.dereferenceVerificationMethod(a) : a;
    return method.publicKeyBase58 ?? verkeyFromDidKey(`did:key:${method.publicKeyMultibase}`);
  });
  const endpoints = (doc.service ?? []).map((s) => (typeof s.serviceEndpoint === 'string' ? s.serviceEndpoint : (s.serviceEndpoint as { uri: string }).uri));
  return { verkeys, endpoints };
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DidPeerError);
    return (error as DidPeerError).code;
  }
  return undefined;
}

describe('Credo fixtures resolve here as Credo resolves them', () => {
  test.each([['did:peer:2', CREDO_PEER2], ['did:peer:4 (did-communication)', CREDO_PEER4_V1], ['did:peer:4 (DIDCommMessaging)', CREDO_PEER4_V2]])('%s', async (_name, did) => {
    const ours = resolveDidPeer(did);
    const credo = credoSummary(await credoResolve(did));
    expect(ours.did).toBe(did);
    expect(ours.verkeys).toEqual(credo.verkeys);
    expect(ours.services.map((s) => s.serviceEndpoint)).toEqual(credo.endpoints);
  });

  test('the details: keys, services, routing keys, short forms', () => {
    const p2 = resolveDidPeer(CREDO_PEER2);
    expect(p2.verkeys).toEqual(['ByHnpUCFb1vAfh9CFZ8ZkmUZguURW8nSw889hy6rD8L7', '3M5RCDjPTWPkKSN3sxUmmMqHbmRPegYP1tjcKyrDbt9J']);
    expect(p2.document.keyAgreement).toEqual([`${CREDO_PEER2}#key-1`]);
    expect(p2.services).toEqual([
      expect.objectContaining({
        id: `${CREDO_PEER2}#didcommmessaging-0`,
        type: 'DIDCommMessaging',
        serviceEndpoint: 'https://example.com/endpoint',
        routingKeys: ['did:example:somemediator#somekey'],
        routingVerkeys: [],
        recipientVerkeys: p2.verkeys,
      }),
    ]);

    const v1 = resolveDidPeer(CREDO_PEER4_V1);
    expect(v1.verkeys).toEqual(['7H8ScGrunfcGBwMhhRakDMYguLAWiNWhQ2maYH84J8fE']);
    expect(v1.services).toEqual([
      expect.objectContaining({ type: 'did-communication', serviceEndpoint: 'https://example.com', recipientKeys: ['#41fb2ec7-1f8b-42bf-91a2-4ef9092ddc16'], recipientVerkeys: v1.verkeys }),
    ]);
    expect(v1.document.alsoKnownAs).toEqual(['did:peer:4zQmZJVsg5xdo5gVX3HCEvwp29MxrCMvnBnPM2TTYqXjLseo']);
    const short = shortFormOf(CREDO_PEER4_V1)!;
    expect(resolveDidPeer(short, { longForm: CREDO_PEER4_V1 }).verkeys).toEqual(v1.verkeys);
    expect(errorCode(() => resolveDidPeer(short))).toBe('unresolvable');
    expect(errorCode(() => resolveDidPeer(short, { longForm: CREDO_PEER4_V2 }))).toBe('unresolvable');

    const v2 = resolveDidPeer(CREDO_PEER4_V2);
    expect(v2.services[0]).toMatchObject({ type: 'DIDCommMessaging', serviceEndpoint: 'didcomm:transport/queue', recipientVerkeys: v2.verkeys });
  });
});

describe('DIDs Credo makes for DID Exchange (createPeerDidDocumentFromServices)', () => {
  const key = generateKeyPair();
  const routing = generateKeyPair();
  const { didDocument } = createPeerDidDocumentFromServices(
    [
      {
        id: '#inline-0',
        serviceEndpoint: 'http://127.0.0.1:9/didcomm',
        recipientKeys: [Kms.PublicJwk.fromPublicKey({ kty: 'OKP', crv: 'Ed25519', publicKey: key.publicKey })],
        routingKeys: [Kms.PublicJwk.fromPublicKey({ kty: 'OKP', crv: 'Ed25519', publicKey: routing.publicKey })],
      },
    ],
    false,
  );
  const verkey = verkeyFromPublicKey(key.publicKey);

  test.each([['did:peer:2', () => didDocumentToNumAlgo2Did(didDocument)], ['did:peer:4', () => didDocumentToNumAlgo4Did(didDocument).longFormDid]])('%s: service, recipient and routing keys', (_n, make) => {
    const resolved = resolveDidPeer(make());
    expect(resolved.verkeys).toEqual([verkey]);
    expect(resolved.services).toHaveLength(1);
    expect(resolved.services[0]).toMatchObject({ type: 'did-communication', serviceEndpoint: 'http://127.0.0.1:9/didcomm', recipientVerkeys: [verkey], routingVerkeys: [verkeyFromPublicKey(routing.publicKey)] });
  });
});

describe('our did:peer:4', () => {
  const key = generateKeyPair();
  const verkey = verkeyFromPublicKey(key.publicKey);
  const created = createDidPeer4({ verkey, serviceEndpoint: 'https://agent.example/didcomm/abc' });

  test('long and short form, resolved by us', () => {
    expect(created.longForm.startsWith(`${created.shortForm}:z`)).toBe(true);
    expect(created.shortForm).toMatch(/^did:peer:4zQm[1-9A-HJ-NP-Za-km-z]{44}$/);
    expect(shortFormOf(created.longForm)).toBe(created.shortForm);
    const resolved = resolveDidPeer(created.longForm);
    expect(resolved.document).toEqual(created.document);
    expect(resolved.verkeys).toEqual([verkey]);
    expect(resolved.services).toEqual([
      { id: '#didcomm-0', type: 'did-communication', serviceEndpoint: 'https://agent.example/didcomm/abc', recipientKeys: ['#key-1'], routingKeys: [], recipientVerkeys: [verkey], routingVerkeys: [] },
    ]);
    expect(resolveDidPeer(created.shortForm, { longForm: created.longForm }).did).toBe(created.longForm);
  });

  test('resolved by Credo: same key, same DIDComm service, and Credo accepts the hash (its alsoKnownAs is our short form)', async () => {
    const doc = await credoResolve(created.longForm);
    expect(doc.alsoKnownAs).toEqual([created.shortForm]);
    expect(credoSummary(doc)).toEqual({ verkeys: [verkey], endpoints: ['https://agent.example/didcomm/abc'] });
    const [service] = doc.didCommServices;
    expect(service?.type).toBe('did-communication');
    const recipient = doc.dereferenceKey((service as unknown as { recipientKeys: string[] }).recipientKeys[0]!, ['authentication', 'keyAgreement']);
    expect(recipient.publicKeyBase58).toBe(verkey);
  });

  test('a changed document or hash is refused', () => {
    const [, hash, encoded] = /^did:peer:4(z\w+):(z\w+)$/.exec(created.longForm)!;
    const other = createDidPeer4({ verkey, serviceEndpoint: 'https://evil.example/' });
    expect(errorCode(() => resolveDidPeer(`did:peer:4${hash}:${other.longForm.split(':')[3]}`))).toBe('invalid_did');
    expect(errorCode(() => resolveDidPeer(`did:peer:4${other.shortForm.slice(10)}:${encoded}`))).toBe('invalid_did');
  });

  test('bad inputs', () => {
    expect(errorCode(() => createDidPeer4({ verkey: 'nope', serviceEndpoint: 'https://x' }))).toBe('invalid_document');
    expect(errorCode(() => createDidPeer4({ verkey, serviceEndpoint: 'javascript:alert(1)' }))).toBe('invalid_document');
  });
});

describe('refusals and older agents', () => {
  test.each([
    ['did:peer:1 without a document', 'did:peer:1zQmZMygzYqNwU6Uhmewx5Xepf2VLp5S4HLSwwgf2aiKZuwa', 'unresolvable'],
    ['did:web', 'did:web:example.com', 'unsupported'],
    ['a did:peer:2 with a P-256 key', 'did:peer:2.Vz' + 'DnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169', 'unsupported'],
    ['a did:peer:2 with a junk service', 'did:peer:2.Vz6MkqRYqQiSgvZQdnBytw86Qbs2ZWUkGv22od935YF4s8M7V.Sbm90LWpzb24', 'invalid_did'],
    ['an overlong DID', `did:peer:2.Vz6MkqRYqQiSgvZQdnBytw86Qbs2ZWUkGv22od935YF4s8M7V.S${'A'.repeat(20000)}`, 'invalid_did'],
  ])('%s', (_name, did, code) => {
    expect(errorCode(() => resolveDidPeer(did))).toBe(code);
  });

  const legacyVerkey = verkeyFromPublicKey(generateKeyPair().publicKey);
  const legacyDoc = {
    '@context': 'https://w3id.org/did/v1',
    id: 'did:sov:QeQFFcQ2DzhjqX1Vc4kXc3',
    publicKey: [{ id: 'QeQFFcQ2DzhjqX1Vc4kXc3#1', type: 'Ed25519VerificationKey2018', controller: 'QeQFFcQ2DzhjqX1Vc4kXc3', publicKeyBase58: legacyVerkey }],
    authentication: [{ type: 'Ed25519SignatureAuthentication2018', publicKey: 'QeQFFcQ2DzhjqX1Vc4kXc3#1' }],
    service: [{ id: 'QeQFFcQ2DzhjqX1Vc4kXc3;indy', type: 'IndyAgent', priority: 0, recipientKeys: [legacyVerkey], routingKeys: [], serviceEndpoint: 'http://127.0.0.1:9/' }],
  };

  test('an unqualified DID with its attached (Connections 1.0 style) document', () => {
    const resolved = resolveAttachedDidDoc('QeQFFcQ2DzhjqX1Vc4kXc3', legacyDoc);
    expect(resolved.verkeys).toEqual([legacyVerkey]);
    expect(resolved.services).toEqual([expect.objectContaining({ type: 'did-communication', serviceEndpoint: 'http://127.0.0.1:9/', recipientVerkeys: [legacyVerkey] })]);
  });

  test('a did:peer:1 with its attached document; a document naming another DID is refused', () => {
    const key = generateKeyPair();
    const { didDocument } = createPeerDidDocumentFromServices([{ id: '#inline-0', serviceEndpoint: 'http://127.0.0.1:9/', recipientKeys: [Kms.PublicJwk.fromPublicKey({ kty: 'OKP', crv: 'Ed25519', publicKey: key.publicKey })], routingKeys: [] }], false);
    const did = 'did:peer:1zQmZMygzYqNwU6Uhmewx5Xepf2VLp5S4HLSwwgf2aiKZuwa';
    const resolved = resolveAttachedDidDoc(did, { ...didDocument.toJSON(), id: did });
    expect(resolved.verkeys).toEqual([verkeyFromPublicKey(key.publicKey)]);
    expect(resolved.services[0]?.recipientVerkeys).toEqual([verkeyFromPublicKey(key.publicKey)]);
    expect(errorCode(() => resolveAttachedDidDoc(did, { ...didDocument.toJSON(), id: 'did:peer:1zQmOther' }))).toBe('invalid_document');
    expect(errorCode(() => resolveAttachedDidDoc(did, 'not a doc'))).toBe('invalid_document');
  });

  test('bounded: too many services or verification methods', () => {
    const service = legacyDoc.service[0]!;
    expect(errorCode(() => resolveAttachedDidDoc('QeQFFcQ2DzhjqX1Vc4kXc3', { ...legacyDoc, service: Array.from({ length: 11 }, () => service) }))).toBe('invalid_document');
    const method = legacyDoc.publicKey[0]!;
    expect(errorCode(() => resolveAttachedDidDoc('QeQFFcQ2DzhjqX1Vc4kXc3', { ...legacyDoc, publicKey: Array.from({ length: 21 }, (_, i) => ({ ...method, id: `x#${i}` })) }))).toBe('invalid_document');
  });
});
