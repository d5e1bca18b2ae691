import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { serviceMetrics } from '../../lib/adapters/emf-metrics';
import { AUTHORIZER_METRICS } from '../../lib/service/metrics';
import { principalToContext, wholeStageResource } from '../../lib/http/caller';
import { Authenticator } from '../../lib/tenancy/authenticate';
import { platformUsageKey, walletUsageKey } from '../../lib/service/usage-keys';
import { buildDeps, createLogger } from '../shared/deps';
import { macSecrets } from '../shared/secrets';

const deps = buildDeps('authorizer', { secrets: macSecrets });
const logger = createLogger(deps.config.serviceName);
const metrics = serviceMetrics(deps.config.serviceName);
const authenticator = new Authenticator(deps.store, deps.secrets);

/**
 * TOKEN authorizer on x-api-key. Throwing "Unauthorized" is API Gateway's signal for a 401. The policy
 * covers the whole stage so the cached decision serves every route; roles and expiry are enforced by
 * the functions from the context (403, 401). A TOKEN event carries no API request id: the stage's
 * access log records `authorizer.requestId`, this invocation's Lambda request id, to join the two.
 */
export const handler = async (event: APIGatewayTokenAuthorizerEvent, context?: Context): Promise<APIGatewayAuthorizerResult> => {
  if (context) logger.addContext(context);
  let principal: Awaited<ReturnType<Authenticator['authenticate']>>;
  try {
    principal = await authenticator.authenticate(event.authorizationToken);
  } catch (err) {
    // Not a refusal: the store or the key service failed, and API Gateway answers 500.
    logger.error('authorizer failed', { error: err as Error });
    metrics.addMetric(AUTHORIZER_METRICS.failures, MetricUnit.Count, 1).publishStoredMetrics();
    throw err;
  }
  if (!principal) {
    logger.info('authorization refused');
    metrics.addMetric(AUTHORIZER_METRICS.refusals, MetricUnit.Count, 1).publishStoredMetrics();
    throw new Error('Unauthorized');
  }
  return {
    principalId: principal.kind === 'superadmin' ? 'superadmin' : `wallet:${principal.walletId}`,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeStageResource(event.methodArn) }],
    },
    context: principalToContext(principal),
    // The caller's per-tenant throttling bucket (the API's key source is AUTHORIZER).
    usageIdentifierKey:
      principal.kind === 'superadmin' ? platformUsageKey(deps.config.usageKeyPrefix) : walletUsageKey(deps.config.usageKeyPrefix, principal.walletId),
  };
};
