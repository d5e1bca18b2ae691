import { DidService } from '../../lib/dids/service';
import { didContracts } from '../../lib/dids/contract';
import { didOperations } from '../../lib/dids/operations';
import { createGroupHandler } from '../../lib/http/router';
import { TaaService } from '../../lib/taa/service';
import { buildDeps, buildKeyManager, createLogger } from '../shared/deps';

const deps = buildDeps();
const logger = createLogger(deps.config.serviceName);
const taa = new TaaService(deps.store, deps.config.taa);
const dids = new DidService({ store: deps.store, keyManager: buildKeyManager(deps), taa, indyNamespace: deps.config.indyNamespace });

export const handler = createGroupHandler({
  group: 'dids',
  contracts: didContracts,
  impls: didOperations(dids, taa),
  logger,
  publicBaseUrl: deps.config.publicBaseUrl,
});
