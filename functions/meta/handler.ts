import { createGroupHandler } from '../../lib/http/router';
import { metaContracts } from '../../lib/meta/contract';
import { metaOperations } from '../../lib/meta/operations';
import { loadConfig } from '../../lib/config';
import { createLogger } from '../../lib/logging/logger';

// No store or key adapters: this function has no data access.
const config = loadConfig();

export const handler = createGroupHandler({
  group: 'meta',
  contracts: metaContracts,
  impls: metaOperations({ docsAssetsDir: config.docsAssetsDir }),
  logger: createLogger(config.serviceName),
  publicBaseUrl: config.publicBaseUrl,
});
