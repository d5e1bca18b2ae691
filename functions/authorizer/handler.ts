import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { principalToContext, wholeStageResource } from '../../lib/http/caller';
import { Authenticator } from '../../lib/tenancy/authenticate';
import { buildDeps, createLogger } from '../shared/deps';

const deps = buildDeps();
const logger = createLogger(deps.config.serviceName);
const authenticator = new Authenticator(deps.store, deps.secrets);


/**
 * TOKEN authorizer on x-api-key. Throwing "Unauthorized" is API Gateway's signal for a 401. The policy
 * covers the whole stage so the cached decision serves every route; roles are enforced by the
 * functions from the context (403).
 */
export const handler = async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  const principal = await authenticator.authenticate(event.authorizationToken);
  if (!principal) {
    logger.info('authorization refused');
    throw new Error('Unauthorized');
  }
  return {
    principalId: principal.kind === 'superadmin' ? 'superadmin' : `wallet:${principal.walletId}`,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeStageResource(event.methodArn) }],
    },
    context: principalToContext(principal),
  };
};
