import { CreateKeyCommand, DisabledException, GetPublicKeyCommand, KMSClient, KMSInternalException, KMSInvalidStateException, ScheduleKeyDeletionCommand, SignCommand } from '@aws-sdk/client-kms';
import { createHash, createPublicKey, generateKeyPairSync, sign as nodeSign, type KeyObject } from 'node:crypto';
import { mockClient } from 'aws-sdk-client-mock';
import { compactVerify, importJWK, jwtVerify } from 'jose';
import { SDJwtInstance } from '@sd-jwt/core';
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { KmsKeyManager } from '../../lib/adapters/kms-key-manager';
import { LocalKeyManager } from '../../lib/keys/local-key-manager';
import { KeyServiceUnavailableError, MessageTooLargeError, type KeyAlg, type KeyManager } from '../../lib/keys/port';
import { issuerSigner, sdJwtSigner, signCompactJws } from '../../lib/keys/signer';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { keys, tenantScope } from '../../lib/store/keys';
import { MemoryStore } from '../helpers/memory-store';

const scope = tenantScope('3');

/** Verifies a compact JWS made through a key manager with jose, against the public JWK the manager reported. */
async function roundTrip(km: KeyManager, alg: KeyAlg) {
  const key = await km.create(scope, alg);
  const jws = await signCompactJws(issuerSigner(km, scope, { ref: key.ref, alg }, 'did:example:1#key-1'), { typ: 'JWT' }, { iss: 'did:example:1', n: 1 });
  const { payload, protectedHeader } = await jwtVerify(jws, await importJWK(key.publicJwk as never, alg));
  expect(protectedHeader).toEqual({ typ: 'JWT', alg, kid: 'did:example:1#key-1' });
  expect(payload).toEqual({ iss: 'did:example:1', n: 1 });
  return key;
}

describe('KmsKeyManager (aws-sdk-client-mock answering with real keys)', () => {
  const kms = mockClient(KMSClient);
  let keysByArn: Map<string, { priv: KeyObject; spec: string }>;
  beforeEach(() => {
    kms.reset();
    keysByArn = new Map();
    let n = 0;
    kms.on(CreateKeyCommand).callsFake((input) => {
      const arn = `arn:aws:kms:eu-west-1:111122223333:key/k${++n}`;
      const { privateKey } = input.KeySpec === 'ECC_NIST_EDWARDS25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
      keysByArn.set(arn, { priv: privateKey, spec: input.KeySpec });
      return { KeyMetadata: { Arn: arn, KeyId: `k${n}` } };
    });
    kms.on(GetPublicKeyCommand).callsFake((input) => {
      const k = keysByArn.get(input.KeyId)!;
      // What KMS GetPublicKey returns: DER-encoded SubjectPublicKeyInfo.
      return { PublicKey: new Uint8Array(createPublicKey(k.priv).export({ format: 'der', type: 'spki' })), KeySpec: k.spec as never };
    });
    // KMS semantics: ED25519_SHA_512 + RAW = EdDSA over the message; ECDSA_SHA_256 answers DER.
    kms.on(SignCommand).callsFake((input) => {
      const k = keysByArn.get(input.KeyId)!;
      if (input.SigningAlgorithm === 'ED25519_SHA_512') return { Signature: nodeSign(null, input.Message, k.priv) };
      if (input.MessageType === 'DIGEST') throw new Error('digest path is asserted separately');
      return { Signature: nodeSign('sha256', input.Message, k.priv) };
    });
  });

  const km = () => new KmsKeyManager(new KMSClient({ region: 'eu-west-1' }), 'my-stack');

  test.each(['EdDSA', 'ES256'] as const)('%s: keys are created tagged, signatures verify with jose (DER -> r||s for ES256)', async (alg) => {
    const key = await roundTrip(km(), alg);
    expect(key.ref).toMatch(/^arn:aws:kms:/);
    const create = kms.commandCalls(CreateKeyCommand)[0]!.args[0].input;
    expect(create).toMatchObject({
      KeySpec: alg === 'EdDSA' ? 'ECC_NIST_EDWARDS25519' : 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      Tags: [
        { TagKey: 'service', TagValue: 'my-stack' },
        { TagKey: 'wallet_id', TagValue: '3' },
      ],
    });
    const signCall = kms.commandCalls(SignCommand)[0]!.args[0].input;
    expect(signCall).toMatchObject({ MessageType: 'RAW', SigningAlgorithm: alg === 'EdDSA' ? 'ED25519_SHA_512' : 'ECDSA_SHA_256' });
  });

  test('no key policy is ever passed (the default policy: IAM decides, and the tenant roles deny keys of other wallets); deletion asks for the 30-day window', async () => {
    kms.on(ScheduleKeyDeletionCommand).resolves({ DeletionDate: new Date(Date.now() + 30 * 86400_000) });
    const key = await km().create(scope, 'ES256');
    await km().scheduleDeletion(scope, key.ref);
    const creates = kms.commandCalls(CreateKeyCommand).map((c) => c.args[0].input);
    expect(creates.length).toBeGreaterThan(0);
    for (const input of creates) {
      expect(input).not.toHaveProperty('Policy');
      expect(input).not.toHaveProperty('BypassPolicyLockoutSafetyCheck');
      expect(Object.keys(input).sort()).toEqual(['Description', 'KeySpec', 'KeyUsage', 'Tags']);
    }
    expect(kms.commandCalls(ScheduleKeyDeletionCommand).map((c) => c.args[0].input)).toEqual([{ KeyId: key.ref, PendingWindowInDays: 30 }]);
  });

  test('ES256 over more than 4096 bytes signs the SHA-256 digest (MessageType DIGEST); EdDSA refuses clearly', async () => {
    const manager = km();
    const es = await manager.create(scope, 'ES256');
    const data = Buffer.alloc(5000, 7);
    kms.on(SignCommand).callsFake((input) => {
      expect(input).toMatchObject({ MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
      expect(Buffer.from(input.Message).equals(createHash('sha256').update(data).digest())).toBe(true);
      return { Signature: nodeSign('sha256', data, keysByArn.get(input.KeyId)!.priv) };
    });
    const sig = await manager.sign(scope, es.ref, 'ES256', data);
    expect(sig).toHaveLength(64);
    const ed = await manager.create(scope, 'EdDSA');
    await expect(manager.sign(scope, ed.ref, 'EdDSA', data)).rejects.toBeInstanceOf(MessageTooLargeError);
  });

  test('throttling and KMS internal errors are a retryable 503; a disabled key is a 409, a key quota a logged 500; other errors surface as they are', async () => {
    const manager = km();
    const key = await manager.create(scope, 'EdDSA');
    kms.on(SignCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    await expect(manager.sign(scope, key.ref, 'EdDSA', Buffer.from('x'))).rejects.toBeInstanceOf(KeyServiceUnavailableError);
    kms.on(SignCommand).rejects(new KMSInternalException({ message: 'boom', $metadata: {} }));
    await expect(manager.sign(scope, key.ref, 'EdDSA', Buffer.from('x'))).rejects.toMatchObject({ status: 503, code: 'key_service_unavailable' });
    kms.on(SignCommand).rejects(new KMSInvalidStateException({ message: 'pending deletion', $metadata: {} }));
    await expect(manager.sign(scope, key.ref, 'EdDSA', Buffer.from('x'))).rejects.toMatchObject({ status: 409, code: 'issuer_key_disabled' });
    kms.on(CreateKeyCommand).rejects(Object.assign(new Error('too many keys'), { name: 'LimitExceededException' }));
    await expect(manager.create(scope, 'EdDSA')).rejects.toMatchObject({ status: 500, code: 'key_quota_exceeded' });
    kms.on(SignCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    await expect(manager.sign(scope, key.ref, 'EdDSA', Buffer.from('x'))).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });

  test('a new key that KMS does not show yet (NotFound, AccessDenied while its tag propagates, an unsettled state) is waited for, then a 503', async () => {
    const waits: number[] = [];
    const manager = new KmsKeyManager(new KMSClient({ region: 'eu-west-1' }), 'my-stack', async (ms) => {
      waits.push(ms);
    });
    const real = kms.commandCalls(GetPublicKeyCommand).length;
    const failures = 3;
    kms
      .on(GetPublicKeyCommand)
      .rejectsOnce(Object.assign(new Error('no such key'), { name: 'NotFoundException' }))
      .rejectsOnce(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }))
      .rejectsOnce(new KMSInvalidStateException({ message: 'still creating', $metadata: {} }))
      .callsFake((input) => {
        const k = keysByArn.get(input.KeyId)!;
        return { PublicKey: new Uint8Array(createPublicKey(k.priv).export({ format: 'der', type: 'spki' })), KeySpec: k.spec as never };
      });
    const key = await manager.create(scope, 'EdDSA');
    expect(key.publicJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(waits).toEqual([100, 200, 400]);
    expect(kms.commandCalls(GetPublicKeyCommand).length - real).toBe(failures + 1);

    waits.length = 0;
    kms.on(GetPublicKeyCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    kms.on(ScheduleKeyDeletionCommand).resolves({ DeletionDate: new Date() });
    const created = kms.commandCalls(CreateKeyCommand).length;
    await expect(manager.create(scope, 'EdDSA')).rejects.toMatchObject({ status: 503, code: 'key_service_unavailable' });
    expect(waits).toEqual([100, 200, 400, 800, 1600, 3200]);
    // The caller never got that key: it is given up, not left costing.
    const orphan = kms.commandCalls(CreateKeyCommand)[created]!;
    const arnOfOrphan = (await orphan.returnValue).KeyMetadata!.Arn;
    expect(kms.commandCalls(ScheduleKeyDeletionCommand).map((c) => c.args[0].input)).toEqual([{ KeyId: arnOfOrphan, PendingWindowInDays: 30 }]);
    // An existing key's AccessDenied is not waited for: it is a real refusal.
    await expect(manager.publicJwk(scope, key.ref, 'EdDSA')).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(waits).toHaveLength(6);
  });

  test('a disabled key (DisabledException) is a 409; KeyUnavailableException a retryable 503', async () => {
    const manager = km();
    const key = await manager.create(scope, 'ES256');
    kms.on(SignCommand).rejects(new DisabledException({ message: 'disabled', $metadata: {} }));
    await expect(manager.sign(scope, key.ref, 'ES256', Buffer.from('x'))).rejects.toMatchObject({ status: 409, code: 'issuer_key_disabled' });
    kms.on(SignCommand).rejects(Object.assign(new Error('hsm'), { name: 'KeyUnavailableException' }));
    await expect(manager.sign(scope, key.ref, 'ES256', Buffer.from('x'))).rejects.toMatchObject({ status: 503 });
  });

  test('a key of the wrong spec is refused when reading its public key', async () => {
    const manager = km();
    const key = await manager.create(scope, 'ES256');
    await expect(manager.publicJwk(scope, key.ref, 'EdDSA')).rejects.toThrow(/ECC_NIST_EDWARDS25519/);
  });
});

describe('LocalKeyManager', () => {
  const setup = () => {
    const store = new MemoryStore();
    return { store, km: new LocalKeyManager(store, new LocalSecretDeriver('cd'.repeat(32))) };
  };

  test.each(['EdDSA', 'ES256'] as const)('%s: signatures verify with jose', async (alg) => {
    await roundTrip(setup().km, alg);
  });

  test('the private key is stored only sealed, and a fresh manager (cold start) still signs with it', async () => {
    const { store, km } = setup();
    const key = await km.create(scope, 'EdDSA');
    const item = (await store.get(keys.localKey(scope, key.ref)))!;
    expect(Object.keys(item).sort()).toEqual(['PK', 'SK', 'alg', 'public_jwk', 'sealed', 'type']);
    expect(JSON.stringify(item)).not.toMatch(/"d"/);
    const cold = new LocalKeyManager(store, new LocalSecretDeriver('cd'.repeat(32)));
    const input = `${Buffer.from('{"alg":"EdDSA"}').toString('base64url')}.${Buffer.from('hello').toString('base64url')}`;
    const sig = await cold.sign(scope, key.ref, 'EdDSA', Buffer.from(input));
    const { payload } = await compactVerify(`${input}.${Buffer.from(sig).toString('base64url')}`, await importJWK(key.publicJwk as never, 'EdDSA'));
    expect(Buffer.from(payload).toString()).toBe('hello');
  });

  test('a sealed key does not open under another master key, nor when moved to another wallet', async () => {
    const { store, km } = setup();
    const key = await km.create(scope, 'ES256');
    const otherMaster = new LocalKeyManager(store, new LocalSecretDeriver('ef'.repeat(32)));
    await expect(otherMaster.sign(scope, key.ref, 'ES256', Buffer.from('x'))).rejects.toThrow();
    const other = tenantScope('4');
    const item = (await store.get(keys.localKey(scope, key.ref)))!;
    await store.write([{ type: 'put', item: { ...item, ...keys.localKey(other, key.ref) } }]);
    const fresh = new LocalKeyManager(store, new LocalSecretDeriver('cd'.repeat(32)));
    await expect(fresh.sign(other, key.ref, 'ES256', Buffer.from('x'))).rejects.toThrow();
    await expect(fresh.sign(other, 'local:00000000-0000-0000-0000-000000000000', 'ES256', Buffer.from('x'))).rejects.toThrow(/no local/);
  });
});

describe('signer for @sd-jwt/*', () => {
  test('an SD-JWT issued by @sd-jwt/core through the key manager verifies with jose and discloses its claims', async () => {
    const km = new LocalKeyManager(new MemoryStore(), new LocalSecretDeriver('cd'.repeat(32)));
    const key = await km.create(scope, 'ES256');
    const signer = issuerSigner(km, scope, { ref: key.ref, alg: 'ES256' }, 'did:example:issuer#key-1');
    const sdjwt = new SDJwtInstance({ signer: sdJwtSigner(signer), signAlg: 'ES256', hasher: digest, hashAlg: 'sha-256', saltGenerator: generateSalt });
    const token = await sdjwt.issue({ iss: 'did:example:issuer', given_name: 'Ada', family_name: 'Lovelace' }, { _sd: ['given_name'] }, { header: { kid: signer.kid } });
    const [jwt, ...disclosures] = token.split('~');
    const { payload, protectedHeader } = await jwtVerify(jwt!, await importJWK(key.publicJwk as never, 'ES256'));
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'did:example:issuer#key-1' });
    expect(payload).toMatchObject({ iss: 'did:example:issuer', family_name: 'Lovelace', _sd_alg: 'sha-256' });
    expect(payload.given_name).toBeUndefined();
    expect(disclosures.filter(Boolean)).toHaveLength(1);
    const claims = await new SDJwtInstance({ hasher: digest }).getClaims(token);
    expect(claims).toMatchObject({ given_name: 'Ada', family_name: 'Lovelace' });
  });
});
