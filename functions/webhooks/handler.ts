import { createGroupHandler } from '../../lib/http/router';
import { webhookContracts } from '../../lib/webhooks/contract';
import { webhookOperations } from '../../lib/webhooks/operations';
import { WebhookService } from '../../lib/webhooks/service';
import { buildDeps, createLogger } from '../shared/deps';
import { macSecrets } from '../shared/secrets';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('webhooks', { secrets: macSecrets, sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'webhooks',
  contracts: webhookContracts,
  impls: webhookOperations(
    new WebhookService({ store: deps.store, secrets: deps.secrets, events: deps.events, allowLoopback: deps.config.webhookAllowLoopback }),
  ),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
