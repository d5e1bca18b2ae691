import { createHmac } from 'node:crypto';
import type { SecretDeriver } from '../secrets/port';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com). Written here rather than taken from
 * the `standardwebhooks` package: it is one HMAC, and keeping that package for the tests lets an
 * independent implementation verify what we sign.
 */
export const SECRET_PREFIX = 'whsec_';

/**
 * A wallet's signing secret of a generation: derived from the service's KMS HMAC key (never stored),
 * so rotating is bumping the generation.
 */
export async function signingKey(secrets: SecretDeriver, walletId: string, generation: number): Promise<Uint8Array> {
  return secrets.derive(`webhook-signing/v1/${walletId}/${generation}`);
}

export function formatSecret(key: Uint8Array): string {
  return `${SECRET_PREFIX}${Buffer.from(key).toString('base64')}`;
}

/** The `webhook-signature` value: one `v1,<base64 HMAC-SHA256(id.timestamp.body)>` per key, space-separated. */
export function signatureHeader(keys: readonly Uint8Array[], id: string, timestampSeconds: number, body: string): string {
  return keys
    .map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`)
    .join(' ');
}
