import { createGroupHandler } from '../../lib/http/router';
import { webhookContracts } from '../../lib/webhooks/contract';
import { webhookOperations } from '../../lib/webhooks/operations';
import { WebhookService } from '../../lib/webhooks/service';
import { buildDeps, buildDispatcher, createLogger } from '../shared/deps';

const deps = buildDeps();
const logger = createLogger(deps.config.serviceName);

export const handler = createGroupHandler({
  group: 'webhooks',
  contracts: webhookContracts,
  impls: webhookOperations(
    new WebhookService({
      store: deps.store,
      secrets: deps.secrets,
      events: deps.events,
      dispatcher: buildDispatcher(deps, logger),
      allowLoopback: deps.config.webhookAllowLoopback,
    }),
  ),
  logger,
});
