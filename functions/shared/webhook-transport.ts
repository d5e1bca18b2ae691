import { NodeWebhookTransport } from '../../lib/adapters/node-webhook-transport';
import type { Resolver, WebhookTransport } from '../../lib/webhooks/transport';
import type { Deps } from './deps';

/** Test seams of the webhook workers; only the local runtime's callers pass them. */
export interface WebhookOverrides {
  /** Answers DNS for the SSRF guard (tests inject chosen addresses). */
  readonly resolver?: Resolver;
}

/** The SSRF-guarded HTTP transport: only the delivery worker sends webhook requests. */
export function webhookTransport(deps: Deps, overrides: WebhookOverrides = {}): WebhookTransport {
  return new NodeWebhookTransport({
    allowLoopback: deps.config.webhookAllowLoopback,
    ...(overrides.resolver ? { resolver: overrides.resolver } : {}),
    userAgent: `${deps.config.serviceName}-webhooks/1`,
  });
}

