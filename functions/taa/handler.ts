import { createGroupHandler } from '../../lib/http/router';
import { taaContracts } from '../../lib/taa/contract';
import { taaOperations } from '../../lib/taa/operations';
import { TaaService } from '../../lib/taa/service';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('taa', { sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'taa',
  contracts: taaContracts,
  impls: taaOperations(new TaaService(deps.store, deps.config.taa)),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
