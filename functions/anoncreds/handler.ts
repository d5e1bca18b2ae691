import { anoncredsContracts } from '../../lib/anoncreds/contract';
import { AnonCredsCredentialRevocation } from '../../lib/anoncreds/credential-revocation';
import { AnonCredsIssuance } from '../../lib/anoncreds/issuance';
import { anoncredsIssuanceContracts } from '../../lib/anoncreds/issuance-contract';
import { anoncredsIssuanceOperations } from '../../lib/anoncreds/issuance-operations';
import { anoncredsOperations } from '../../lib/anoncreds/operations';
import { AnonCredsRegistry } from '../../lib/anoncreds/registry';
import { anoncredsRevocationContracts } from '../../lib/anoncreds/revocation-contract';
import { anoncredsRevocationOperations } from '../../lib/anoncreds/revocation-operations';
import { InvitationService } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { createGroupHandler } from '../../lib/http/router';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildCredDefKeySealer } from '../shared/anoncreds-keys';
import { buildDidcommKeyVault } from '../shared/didcomm-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('anoncreds', { sessions: walletSessions });
// AnonCreds offers (POST /api/v1/credentials): checked and sent here; the issuing worker signs once the holder asks.
const issuance = new AnonCredsIssuance({
  store: deps.store,
  events: deps.events,
  // An offer with neither contact_id nor invitation_id travels in a new invitation, with its own DIDComm key.
  invitations: new InvitationService({ store: deps.store, events: deps.events, refs: new PublicRefs(deps.store), keys: buildDidcommKeyVault(deps) }),
});
// Revocation opens the registry's sealed γ with the wallet's data key.
const revocation = new AnonCredsCredentialRevocation({ store: deps.store, events: deps.events, sealer: buildCredDefKeySealer(deps) });

export const handler = createGroupHandler({
  group: 'anoncreds',
  contracts: { ...anoncredsContracts, ...anoncredsIssuanceContracts, ...anoncredsRevocationContracts },
  impls: { ...anoncredsOperations(new AnonCredsRegistry({ store: deps.store, events: deps.events })), ...anoncredsIssuanceOperations(issuance), ...anoncredsRevocationOperations(revocation) },
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
