import { didcommPublicContracts } from '../../lib/didcomm/contract';
import { InboundService } from '../../lib/didcomm/inbound';
import { didcommPublicOperations } from '../../lib/didcomm/operations';
import { createGroupHandler } from '../../lib/http/router';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildJobQueue } from '../shared/job-queue';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('didcomm-inbound', { sessions: walletSessions });
const logger = createLogger(deps.config.serviceName);
const inbound = new InboundService({ store: deps.store, queue: buildJobQueue(deps, 'didcomm-inbound') });

export const handler = createGroupHandler({
  group: 'didcomm-inbound',
  contracts: didcommPublicContracts,
  impls: didcommPublicOperations(inbound, new PublicRefs(deps.store), (r) => {
    if (!r.stored) logger.info('DIDComm envelope for no key of the wallet; not stored', { reason: r.reason });
  }),
  logger,
  publicBaseUrl: deps.config.publicBaseUrl,
});
