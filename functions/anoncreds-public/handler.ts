import { anoncredsPublicContracts } from '../../lib/anoncreds/contract';
import { anoncredsPublicOperations } from '../../lib/anoncreds/operations';
import { PublicObjects } from '../../lib/anoncreds/public-objects';
import { createGroupHandler } from '../../lib/http/router';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('anoncreds-public', { sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'anoncreds-public',
  contracts: anoncredsPublicContracts,
  impls: anoncredsPublicOperations(new PublicObjects(deps.store)),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
