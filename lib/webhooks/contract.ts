import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { eventEnvelopeSchema } from '../events/envelope';
import { Timestamp } from '../tenancy/contract';
import { DELIVERY_ID, DELIVERY_STATUSES } from './records';
import { MAX_TARGET_URLS } from './target-url';

/** Request and response schemas of the webhook settings and delivery routes. */

const UrlList = z.array(z.string()).meta({ description: 'Webhook target URLs' });

const SecretView = z
  .object({
    secret: z.string().meta({ description: 'Current signing secret (whsec_ + base64 key, Standard Webhooks)' }),
    previous_secret: z.string().optional().meta({ description: 'While a rotation is in its grace period: the previous secret, which also signs' }),
    previous_secret_expires_at: Timestamp.optional(),
  })
  .meta({ title: 'WebhookSecret' });

const TargetView = z
  .object({
    url: z.string(),
    state: z.enum(['active', 'disabled']),
    added_at: Timestamp.meta({ description: 'The target receives events created from this time on' }),
    disabled_at: Timestamp.optional(),
    disabled_reason: z.string().optional(),
  })
  .meta({ title: 'WebhookTarget' });

const AttemptView = z.object({
  attempt: z.number().int(),
  at: Timestamp,
  outcome: z.enum(['delivered', 'http_error', 'timeout', 'network_error', 'refused_address']),
  status_code: z.number().int().optional(),
  duration_ms: z.number(),
  error: z.string().optional(),
  response_snippet: z.string().optional().meta({ description: 'First 512 bytes of the response body' }),
});

export const DeliveryView = z
  .object({
    delivery_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    url: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempt_count: z.number().int(),
    attempts: z.array(AttemptView),
    next_attempt_at: Timestamp.optional(),
    final_reason: z.string().optional(),
    redelivery_of: z.string().optional(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'WebhookDelivery' });

const DeliveryIdParam = z.strictObject({ delivery_id: z.string().regex(DELIVERY_ID, 'not a delivery id') });

export const webhookContracts = {
  getWebhookTargetUrls: { response: UrlList, errors: [401, 403] },
  putWebhookTargetUrls: {
    body: z.strictObject({
      urls: z
        .array(z.string())
        .max(MAX_TARGET_URLS)
        .optional()
        .meta({ description: 'Replaces the list (omitted: no targets). Absolute https URLs, no credentials, at most 10.' }),
    }),
    response: UrlList,
    errors: [400, 401, 403],
  },
  listWebhookTargets: { response: z.array(TargetView), errors: [401, 403] },
  pingWebhookTargets: {
    response: z.object({ event: eventEnvelopeSchema }),
    status: 202,
    errors: [401, 403, 409],
  },
  getWebhookSecret: { response: SecretView, errors: [401, 403] },
  rotateWebhookSecret: {
    body: z.strictObject({
      grace_period_seconds: z
        .number()
        .int()
        .min(0)
        .max(7 * 86400)
        .optional()
        .meta({ description: 'How long the previous secret keeps signing too (default 86400, max 7 days)' }),
    }),
    bodyOptional: true,
    response: SecretView,
    errors: [400, 401, 403],
  },
  listWebhookDeliveries: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(100).optional(),
      status: z.enum(DELIVERY_STATUSES).optional(),
      event_id: z.string().max(40).optional(),
    }),
    response: z.array(DeliveryView),
    errors: [400, 401, 403],
  },
  getWebhookDelivery: { params: DeliveryIdParam, response: DeliveryView, errors: [400, 401, 403, 404] },
  redeliverWebhook: { params: DeliveryIdParam, response: DeliveryView, status: 202, errors: [400, 401, 403, 404, 409] },
} satisfies OperationContracts;
