import { anoncredsContracts } from '../../lib/anoncreds/contract';
import { AnonCredsCredentialRevocation } from '../../lib/anoncreds/credential-revocation';
import { anoncredsOperations } from '../../lib/anoncreds/operations';
import { AnonCredsRegistry } from '../../lib/anoncreds/registry';
import { anoncredsRevocationContracts } from '../../lib/anoncreds/revocation-contract';
import { anoncredsRevocationOperations } from '../../lib/anoncreds/revocation-operations';
import { CredDefKeySealer } from '../../lib/anoncreds/sealed-keys';
import { createGroupHandler } from '../../lib/http/router';
import { buildDeps, createLogger } from '../shared/deps';
import { buildWalletDataKeys } from '../shared/didcomm-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('anoncreds', { sessions: walletSessions });
// Revocation opens the registry's sealed γ with the wallet's data key (Decrypt only).
const revocation = new AnonCredsCredentialRevocation({ store: deps.store, events: deps.events, sealer: new CredDefKeySealer(buildWalletDataKeys(deps)) });

export const handler = createGroupHandler({
  group: 'anoncreds',
  contracts: { ...anoncredsContracts, ...anoncredsRevocationContracts },
  impls: { ...anoncredsOperations(new AnonCredsRegistry({ store: deps.store, events: deps.events })), ...anoncredsRevocationOperations(revocation) },
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
