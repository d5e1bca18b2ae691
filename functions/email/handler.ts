import { BulkEmailService } from '../../lib/email/bulk';
import { emailContracts } from '../../lib/email/contract';
import { emailOperations } from '../../lib/email/operations';
import { createGroupHandler } from '../../lib/http/router';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';
import { buildJobQueue } from '../shared/job-queue';

const deps = buildDeps('email', { sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'email',
  contracts: emailContracts,
  impls: emailOperations(new BulkEmailService({ store: deps.store, events: deps.events, queue: buildJobQueue(deps, 'email') })),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
