import { DependencyTimeoutException, KMSInternalException } from '@aws-sdk/client-kms';

/** Transient KMS faults: throttling, internal errors, an unreachable custom key store. */
export function isRetryable(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return err instanceof KMSInternalException || err instanceof DependencyTimeoutException || name === 'ThrottlingException' || name === 'KeyUnavailableException';
}
