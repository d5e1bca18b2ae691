import { NotFoundError } from '../../lib/http/errors';
import { createGroupHandler } from '../../lib/http/router';
import { statusListPublicContracts } from '../../lib/status-lists/contract';
import { statusListPublicOperations } from '../../lib/status-lists/operations';
import { StatusListPublisher } from '../../lib/status-lists/publication';
import { KnownWallets } from '../../lib/tenancy/known-wallets';
import { buildDeps, createLogger } from '../shared/deps';
import { buildKeyManager } from '../shared/issuer-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('status-lists-public', { sessions: walletSessions });
const publisher = new StatusListPublisher({ store: deps.store, keyManager: buildKeyManager(deps), events: deps.events });

export const handler = createGroupHandler({
  group: 'status-lists-public',
  contracts: statusListPublicContracts,
  impls: statusListPublicOperations(publisher, new KnownWallets(deps.store, () => new NotFoundError('No such status list', 'status_list_not_found'))),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
