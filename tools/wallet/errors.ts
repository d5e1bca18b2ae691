/**
 * The one error the wallet's commands throw: a message a person can act on and a stable code that
 * scripts can test (`--json` prints both). Anything else that escapes a command is reported as
 * `internal_error` with its message.
 */
export class WalletError extends Error {
  constructor(
    readonly code: WalletErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WalletError';
  }
}

export type WalletErrorCode =
  | 'usage'
  | 'invalid_offer'
  | 'invalid_request'
  | 'unknown_credential'
  | 'no_matching_credential'
  | 'issuer_error'
  | 'verifier_error'
  | 'invalid_credential'
  | 'network_error'
  | 'unsupported'
  | 'internal_error';

/** Exit codes (docs/wallet.md): 0 done, 1 the command failed, 2 bad usage, 3 the verifier refused the presentation. */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3 } as const;

/** An error's message, also for errors from another realm (Node's fetch under Jest's VM), whose `instanceof Error` is false. */
export function messageOf(err: unknown): string {
  const m = (err as { message?: unknown } | null)?.message;
  return typeof m === 'string' ? m : String(err);
}
