import { InvitationService } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { createGroupHandler } from '../../lib/http/router';
import { ContextFiles } from '../../lib/jsonld/context-files';
import { validateContext } from '../../lib/jsonld/context-validation';
import { jsonldContracts } from '../../lib/jsonld/contract';
import { JsonLdIssuance } from '../../lib/jsonld/issuance';
import { jsonldIssuanceContracts } from '../../lib/jsonld/issuance-contract';
import { jsonldIssuanceOperations } from '../../lib/jsonld/issuance-operations';
import { jsonldOperations } from '../../lib/jsonld/operations';
import { JsonLdStatusSource } from '../../lib/jsonld/status';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildDidcommKeyVault } from '../shared/didcomm-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('jsonld', { sessions: walletSessions });
const refs = new PublicRefs(deps.store);
const files = new ContextFiles({ store: deps.store, refs, validate: validateContext });
// Offers are checked here as fully as the signature will be; the issuing worker signs once the holder asks.
// revocation_def_id: the entry is allocated in the wallet's status-list definition with the offer.
const issuance = new JsonLdIssuance({
  store: deps.store,
  events: deps.events,
  // An offer with neither contact_id nor invitation_id travels in a new invitation, with its own DIDComm key.
  invitations: new InvitationService({ store: deps.store, events: deps.events, refs, keys: buildDidcommKeyVault(deps) }),
  contexts: (scope, baseUrl) => files.lookupFor(scope, baseUrl),
  statusSource: new JsonLdStatusSource({ store: deps.store, events: deps.events, refs }),
});

export const handler = createGroupHandler({
  group: 'jsonld',
  contracts: { ...jsonldContracts, ...jsonldIssuanceContracts },
  impls: { ...jsonldOperations(files), ...jsonldIssuanceOperations(issuance, deps.store) },
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
