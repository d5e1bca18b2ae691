import {
  CreateKeyCommand,
  DisabledException,
  GetPublicKeyCommand,
  KMSInvalidStateException,
  ScheduleKeyDeletionCommand,
  SignCommand,
  type KMSClient,
} from '@aws-sdk/client-kms';
import { createHash } from 'node:crypto';
import { isRetryable } from './kms-errors';
import { setTimeout as delay } from 'node:timers/promises';
import formatter from 'ecdsa-sig-formatter';
import { spkiDerToJwk } from '../keys/jwk';
import {
  KEY_DELETION_WINDOW_DAYS,
  KeyDisabledError,
  KeyQuotaExceededError,
  KeyServiceUnavailableError,
  MessageTooLargeError,
  type CreatedKey,
  type KeyAlg,
  type KeyManager,
  KMS_KEY_SPECS,
  type PublicJwk,
} from '../keys/port';
import { ACCESS_TAGS } from '../service/access';
import type { TenantScope } from '../store/keys';

const SPEC = KMS_KEY_SPECS;

/** KMS's limit on a RAW message. */
export const KMS_RAW_MESSAGE_LIMIT = 4096;


/**
 * KMS is eventually consistent: a key just created can briefly be NotFound or in an unexpected state,
 * and the tag that grants this role access can take a moment to count. Waits before each retry of the
 * first GetPublicKey, about 6 s in all (the API answers within 29 s).
 */
const NEW_KEY_RETRY_DELAYS_MS = [100, 200, 400, 800, 1600, 3200];
const NEW_KEY_TRANSIENT = new Set(['NotFoundException', 'AccessDeniedException']);

/**
 * KMS adapter: asymmetric KMS keys (Ed25519 with ED25519_SHA_512 over the RAW message, which is
 * plain EdDSA; P-256 with ECDSA_SHA_256). Each key is tagged with the service tag its IAM policy
 * requires and with its wallet. The private key never leaves KMS. The client comes from a getter: the
 * one of the wallet session under way, whose role reaches only keys tagged with that wallet.
 */
export class KmsKeyManager implements KeyManager {
  private readonly client: () => KMSClient;

  constructor(
    kms: KMSClient | (() => KMSClient),
    private readonly serviceTag: string,
    private readonly sleep: (ms: number) => Promise<unknown> = delay,
  ) {
    this.client = typeof kms === 'function' ? kms : () => kms;
  }

  private get kms(): KMSClient {
    return this.client();
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isRetryable(err)) throw new KeyServiceUnavailableError();
      if (err instanceof KMSInvalidStateException || err instanceof DisabledException) throw new KeyDisabledError();
      if ((err as { name?: string }).name === 'LimitExceededException') throw new KeyQuotaExceededError();
      throw err;
    }
  }

  async create(scope: TenantScope, alg: KeyAlg): Promise<CreatedKey> {
    const out = await this.call(() =>
      this.kms.send(
        new CreateKeyCommand({
          KeySpec: SPEC[alg].keySpec,
          KeyUsage: 'SIGN_VERIFY',
          Description: `Issuer key (${alg}) of wallet ${scope.walletId}`,
          Tags: [
            { TagKey: ACCESS_TAGS.service, TagValue: this.serviceTag },
            { TagKey: ACCESS_TAGS.wallet, TagValue: scope.walletId },
          ],
        }),
      ),
    );
    const ref = out.KeyMetadata?.Arn;
    if (!ref) throw new Error('KMS CreateKey returned no key ARN');
    for (let attempt = 0; ; attempt++) {
      try {
        return { ref, publicJwk: await this.publicJwk(scope, ref, alg) };
      } catch (err) {
        const transient = err instanceof KeyDisabledError || NEW_KEY_TRANSIENT.has((err as { name?: string }).name ?? '');
        if (!transient || attempt === NEW_KEY_RETRY_DELAYS_MS.length) {
          // The caller never learns this key: give it up rather than leave it costing, unowned. Best effort —
          // KMS may still refuse us the new key for the same reason; it keeps its wallet tag for an operator.
          await this.scheduleDeletion(scope, ref).catch(() => undefined);
          throw transient ? new KeyServiceUnavailableError('The new key is not usable yet; retry shortly') : err;
        }
        await this.sleep(NEW_KEY_RETRY_DELAYS_MS[attempt]!);
      }
    }
  }

  async publicJwk(_scope: TenantScope, ref: string, alg: KeyAlg): Promise<PublicJwk> {
    const out = await this.call(() => this.kms.send(new GetPublicKeyCommand({ KeyId: ref })));
    if (!out.PublicKey || out.KeySpec !== SPEC[alg].keySpec) throw new Error(`KMS key ${ref} is not a ${SPEC[alg].keySpec} key`);
    return spkiDerToJwk(out.PublicKey);
  }

  async sign(_scope: TenantScope, ref: string, alg: KeyAlg, data: Uint8Array): Promise<Uint8Array> {
    let message = data;
    let messageType: 'RAW' | 'DIGEST' = 'RAW';
    if (data.length > KMS_RAW_MESSAGE_LIMIT) {
      // ECDSA signs a SHA-256 digest either way, so a long input is hashed here; EdDSA cannot be.
      if (alg === 'EdDSA') throw new MessageTooLargeError(KMS_RAW_MESSAGE_LIMIT);
      message = createHash('sha256').update(data).digest();
      messageType = 'DIGEST';
    }
    const out = await this.call(() =>
      this.kms.send(new SignCommand({ KeyId: ref, Message: message, MessageType: messageType, SigningAlgorithm: SPEC[alg].signing })),
    );
    if (!out.Signature) throw new Error('KMS Sign returned no signature');
    if (alg === 'EdDSA') return out.Signature;
    // KMS returns ECDSA signatures DER-encoded; JOSE wants r‖s (RFC 7518 §3.4).
    return Buffer.from(formatter.derToJose(Buffer.from(out.Signature), 'ES256'), 'base64url');
  }

  async scheduleDeletion(_scope: TenantScope, ref: string): Promise<{ deletion_date: string }> {
    const out = await this.call(() => this.kms.send(new ScheduleKeyDeletionCommand({ KeyId: ref, PendingWindowInDays: KEY_DELETION_WINDOW_DAYS })));
    return { deletion_date: (out.DeletionDate ?? new Date(Date.now() + KEY_DELETION_WINDOW_DAYS * 86400_000)).toISOString() };
  }
}
