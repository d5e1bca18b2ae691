import { CredDefKeySealer } from '../../lib/anoncreds/sealed-keys';
import type { Deps } from './deps';
import { buildWalletDataKeys } from './didcomm-keys';

/** The AnonCreds private-key sealer, on the wallets' anoncreds data keys (the only purpose it accepts). */
export function buildCredDefKeySealer(deps: Deps): CredDefKeySealer {
  return new CredDefKeySealer(buildWalletDataKeys(deps, 'anoncreds'));
}
