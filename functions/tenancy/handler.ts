import { createGroupHandler } from '../../lib/http/router';
import { tenancyContracts } from '../../lib/tenancy/contract';
import { tenancyOperations } from '../../lib/tenancy/operations';
import { TenancyService } from '../../lib/tenancy/service';
import { buildDeps, createLogger } from '../shared/deps';

const deps = buildDeps();
const logger = createLogger(deps.config.serviceName);

export const handler = createGroupHandler({
  group: 'tenancy',
  contracts: tenancyContracts,
  impls: tenancyOperations(new TenancyService(deps)),
  logger,
});
