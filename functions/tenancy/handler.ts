import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { guardUsageKeys } from '../../lib/adapters/access-guard';
import { ApiGatewayUsageKeys } from '../../lib/adapters/apigateway-usage-keys';
import { LocalUsageKeys } from '../../lib/adapters/local-usage-keys';
import { createGroupHandler } from '../../lib/http/router';
import { tenancyContracts } from '../../lib/tenancy/contract';
import { tenancyOperations } from '../../lib/tenancy/operations';
import { TenancyService } from '../../lib/tenancy/service';
import type { UsageKeys } from '../../lib/service/usage-keys';
import { buildDeps, createLogger } from '../shared/deps';
import { macSecrets } from '../shared/secrets';
import { registrySessions, walletSessions } from '../shared/sessions';
import { SDK_CLIENT_DEFAULTS } from '../shared/sdk';

const deps = buildDeps('tenancy', { secrets: macSecrets, sessions: walletSessions, registry: registrySessions });
const { config } = deps;

function usageKeys(): UsageKeys {
  if (config.keyBackend === 'local') return guardUsageKeys(new LocalUsageKeys(config.usageKeyPrefix), { fn: 'tenancy', wallet: null });
  if (!config.usagePlanName) throw new Error('USAGE_PLAN_NAME is not set');
  return new ApiGatewayUsageKeys(new APIGatewayClient({ ...SDK_CLIENT_DEFAULTS }), config.usagePlanName, config.usageKeyPrefix);
}

export const handler = createGroupHandler({
  group: 'tenancy',
  contracts: tenancyContracts,
  impls: tenancyOperations(new TenancyService({ ...deps, usage: usageKeys() })),
  logger: createLogger(config.serviceName),
  publicBaseUrl: config.publicBaseUrl,
});
