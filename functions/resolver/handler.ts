import { createGroupHandler } from '../../lib/http/router';
import { resolverContracts } from '../../lib/resolver/contract';
import { resolverOperations } from '../../lib/resolver/operations';
import { DidResolver } from '../../lib/resolver/resolver';
import { buildDeps, createLogger } from '../shared/deps';

const deps = buildDeps('resolver');

export const handler = createGroupHandler({
  group: 'resolver',
  contracts: resolverContracts,
  impls: resolverOperations(new DidResolver(deps.store)),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
