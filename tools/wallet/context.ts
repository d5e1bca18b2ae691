import { setGlobalConfig } from '@openid4vc/utils';
import { Oauth2ClientErrorResponseError } from '@openid4vc/oauth2';
import { InvalidFetchResponseError, ValidationError as LibraryValidationError } from '@openid4vc/utils';
import { messageOf, WalletError, type WalletErrorCode } from './errors';
import type { WalletStore } from './store';

/** What every command gets: the wallet folder and where its step-by-step account goes. */
export interface WalletContext {
  readonly store: WalletStore;
  /** One line per step (stderr in the CLI, so stdout stays the result). */
  readonly log: (line: string) => void;
}

// The libraries refuse http URLs in metadata unless told; walletFetch (callbacks.ts) still sends plain
// http only to loopback hosts, which is what the local runtime serves.
setGlobalConfig({ allowInsecureUrls: true });

/** An error from the protocol libraries, as the WalletError a person reads: the server's OAuth error when there is one. */
export function libraryError(err: unknown, what: string, code: WalletErrorCode): WalletError {
  if (err instanceof WalletError) return err;
  // The libraries wrap what our callbacks threw (walletFetch's refusals and network failures): say that.
  for (let cause = (err as { cause?: unknown } | null)?.cause; cause; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof WalletError) return new WalletError(cause.code, `${what}: ${cause.message}`);
  }
  if (err instanceof Oauth2ClientErrorResponseError) {
    const { error, error_description } = err.errorResponse;
    return new WalletError(code, `${what}: the server answered ${err.response.status} ${error}${error_description ? ` (${error_description})` : ''}`);
  }
  if (err instanceof InvalidFetchResponseError) {
    return new WalletError(code, `${what}: the server answered ${err.response.status}${err.textResponse ? ` ${err.textResponse.slice(0, 300)}` : ''}`);
  }
  if (err instanceof LibraryValidationError) return new WalletError(code, `${what}: ${err.message.split('\n')[0]}`);
  return new WalletError(code, `${what}: ${messageOf(err)}`);
}
