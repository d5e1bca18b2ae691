import { exchangeRevocationHook } from '../../lib/didcomm/protocols/issue-credential-v2/revocation';
import { createGroupHandler } from '../../lib/http/router';
import { statusListContracts } from '../../lib/status-lists/contract';
import { statusListOperations } from '../../lib/status-lists/operations';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { StatusListService } from '../../lib/status-lists/service';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildKeyManager } from '../shared/issuer-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('status-lists', { sessions: walletSessions });
// The wallet's public reference names it in its lists' URLs (read from its record once, then cached).
const publisher = new StatusListPublisher({ store: deps.store, keyManager: buildKeyManager(deps), events: deps.events, refs: new PublicRefs(deps.store) });

// Revoking a DIDComm exchange's entry also moves the exchange to credential-revoked (same transaction).
export const handler = createGroupHandler({
  group: 'status-lists',
  contracts: statusListContracts,
  impls: statusListOperations(new StatusListService({ store: deps.store, events: deps.events, publisher, onStatusChange: exchangeRevocationHook(deps.store, deps.events) })),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
