import { walletScope, type OperationImpls } from '../http/contract';
import type { webhookContracts } from './contract';
import type { WebhookService } from './service';

export function webhookOperations(service: WebhookService): OperationImpls<typeof webhookContracts> {
  return {
    getWebhookTargetUrls: ({ caller }) => service.getTargetUrls(walletScope(caller)),
    putWebhookTargetUrls: ({ caller, body }) => service.putTargetUrls(walletScope(caller), body.urls ?? []),
    listWebhookTargets: ({ caller }) => service.listTargets(walletScope(caller)),
    pingWebhookTargets: ({ caller }) => service.ping(walletScope(caller)),
    getWebhookSecret: ({ caller }) => service.getSecret(walletScope(caller)),
    rotateWebhookSecret: ({ caller, body }) => service.rotateSecret(walletScope(caller), body.grace_period_seconds),
    listWebhookDeliveries: ({ caller, query }) => service.listDeliveries(walletScope(caller), query),
    getWebhookDelivery: ({ caller, params }) => service.getDelivery(walletScope(caller), params.delivery_id),
    redeliverWebhook: ({ caller, params }) => service.redeliver(walletScope(caller), params.delivery_id),
  };
}
