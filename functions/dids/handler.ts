import { didContracts } from '../../lib/dids/contract';
import { didOperations } from '../../lib/dids/operations';
import { DidService } from '../../lib/dids/service';
import { createGroupHandler } from '../../lib/http/router';
import { TaaService } from '../../lib/taa/service';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';
import { buildKeyManager } from '../shared/issuer-keys';

const deps = buildDeps('dids', { sessions: walletSessions });
const { config } = deps;
const dids = new DidService({
  store: deps.store,
  keyManager: buildKeyManager(deps),
  // set-public-did needs the wallet's acceptance of the publication agreement.
  taa: new TaaService(deps.store, config.taa),
  indyNamespace: config.indyNamespace,
  limits: { maxDids: config.maxDidsPerWallet, maxCreationsPerMinute: config.maxDidCreationsPerMinute },
});

export const handler = createGroupHandler({
  group: 'dids',
  contracts: didContracts,
  impls: didOperations(dids),
  logger: createLogger(config.serviceName),
  publicBaseUrl: config.publicBaseUrl,
});
