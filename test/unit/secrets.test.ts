import { GenerateMacCommand, KMSClient, KMSInvalidStateException } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { createHmac, randomBytes } from 'node:crypto';
import { KmsSecretDeriver } from '../../lib/adapters/kms-secret-deriver';
import { LocalSecretDeriver } from '../../lib/secrets/local-secret-deriver';
import { cachingDeriver } from '../../lib/secrets/port';

const kms = mockClient(KMSClient);
beforeEach(() => kms.reset());

describe('KMS secret deriver', () => {
  test('derives a purpose secret with GenerateMac HMAC_SHA_256 over the purpose label', async () => {
    // A real HMAC stands in for KMS so the derivation is checked end to end.
    const kmsKey = randomBytes(32);
    kms.on(GenerateMacCommand).callsFake((input) => ({
      Mac: createHmac('sha256', kmsKey).update(Buffer.from(input.Message)).digest(),
      MacAlgorithm: input.MacAlgorithm,
      KeyId: input.KeyId,
    }));
    const deriver = new KmsSecretDeriver(new KMSClient({ region: 'eu-west-1' }), 'arn:aws:kms:eu-west-1:1:key/k');
    const secret = await deriver.derive('api-key-mac/v1');
    expect(Buffer.from(secret)).toEqual(createHmac('sha256', kmsKey).update('api-key-mac/v1').digest());
    const call = kms.commandCalls(GenerateMacCommand)[0]!.args[0].input;
    expect(call).toMatchObject({ KeyId: 'arn:aws:kms:eu-west-1:1:key/k', MacAlgorithm: 'HMAC_SHA_256' });
    // Purposes are separated.
    expect(Buffer.from(await deriver.derive('subwallet-token/v1'))).not.toEqual(Buffer.from(secret));
  });

  test('a KMS error or a missing MAC fails loudly', async () => {
    const deriver = new KmsSecretDeriver(new KMSClient({ region: 'eu-west-1' }), 'k');
    kms.on(GenerateMacCommand).rejects(new KMSInvalidStateException({ message: 'disabled', $metadata: {} }));
    await expect(deriver.derive('api-key-mac/v1')).rejects.toThrow(KMSInvalidStateException);
    kms.on(GenerateMacCommand).resolves({});
    await expect(deriver.derive('api-key-mac/v1')).rejects.toThrow(/no 32-byte MAC/);
  });
});

describe('caching deriver', () => {
  test('calls the inner deriver once per purpose, and again after a failure', async () => {
    let calls = 0;
    let fail = true;
    const inner = {
      derive: async () => {
        calls++;
        if (fail) throw new Error('throttled');
        return new Uint8Array(32);
      },
    };
    const cached = cachingDeriver(inner);
    await expect(cached.derive('api-key-mac/v1')).rejects.toThrow('throttled');
    fail = false;
    await cached.derive('api-key-mac/v1');
    await cached.derive('api-key-mac/v1');
    expect(calls).toBe(2);
  });
});

describe('local secret deriver', () => {
  test('is the same construction as KMS GenerateMac, and refuses a short master key', async () => {
    const master = randomBytes(32);
    const d = new LocalSecretDeriver(master.toString('hex'));
    expect(Buffer.from(await d.derive('api-key-mac/v1'))).toEqual(createHmac('sha256', master).update('api-key-mac/v1').digest());
    expect(() => new LocalSecretDeriver('abcd')).toThrow();
  });
});
