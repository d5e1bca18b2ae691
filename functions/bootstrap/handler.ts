import type { Context } from 'aws-lambda';
import { BaseKeys } from '../../lib/tenancy/base-key';
import { buildDeps, createLogger } from '../shared/deps';
import { macSecrets } from '../shared/secrets';

const deps = buildDeps('bootstrap', { secrets: macSecrets });
const logger = createLogger(deps.config.serviceName);
const baseKeys = new BaseKeys(deps.store, deps.secrets);

/**
 * Not behind API Gateway: the platform team invokes it with IAM (`aws lambda invoke`) after the first
 * deploy to obtain the base key once. `{"rotate": true}` replaces the base key (the old one stops
 * working at once, up to the authorizer cache TTL).
 */
export const handler = async (event: { rotate?: unknown } | null, context?: Context) => {
  if (context) logger.addContext(context);
  if (event?.rotate === true) {
    logger.warn('base key rotated');
    return { created: true, rotated: true, api_key: await baseKeys.rotate() };
  }
  const result = await baseKeys.issue();
  if (!result.created) {
    return { created: false, message: 'The base key exists and is shown only once. Invoke with {"rotate": true} to replace it.' };
  }
  logger.info('base key issued');
  return { created: true, api_key: result.apiKey };
};
