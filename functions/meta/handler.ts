import { createGroupHandler } from '../../lib/http/router';
import { ALL_CONTRACTS } from '../../lib/openapi/all-contracts';
import { metaContracts } from '../../lib/openapi/contract';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { loadConfig } from '../../lib/config';
import { createLogger } from '../../lib/logging/logger';

// No store or key adapters: this function has no data access.
const logger = createLogger(loadConfig().serviceName);
let document: ReturnType<typeof buildOpenApiDocument> | undefined;

export const handler = createGroupHandler({
  group: 'meta',
  contracts: metaContracts,
  impls: { getOpenApi: async () => (document ??= buildOpenApiDocument(ALL_CONTRACTS)) },
  logger,
});
