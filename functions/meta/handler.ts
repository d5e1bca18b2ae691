import { createGroupHandler } from '../../lib/http/router';
import { ALL_CONTRACTS } from '../../lib/openapi/all-contracts';
import { metaContracts } from '../../lib/openapi/contract';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { createLogger } from '../../lib/logging/logger';

const logger = createLogger(process.env.POWERTOOLS_SERVICE_NAME ?? 'credential-service');
let document: ReturnType<typeof buildOpenApiDocument> | undefined;

export const handler = createGroupHandler({
  group: 'meta',
  contracts: metaContracts,
  impls: { getOpenApi: async () => (document ??= buildOpenApiDocument(ALL_CONTRACTS)) },
  logger,
});
