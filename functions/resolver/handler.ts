import { resolverContracts } from '../../lib/dids/contract';
import { resolverOperations } from '../../lib/dids/operations';
import { DidResolver } from '../../lib/dids/resolver';
import { createGroupHandler } from '../../lib/http/router';
import { buildDeps, createLogger } from '../shared/deps';

const deps = buildDeps();

export const handler = createGroupHandler({
  group: 'resolver',
  contracts: resolverContracts,
  impls: resolverOperations(new DidResolver(deps.store)),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
