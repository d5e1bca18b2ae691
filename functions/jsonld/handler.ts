import { createGroupHandler } from '../../lib/http/router';
import { ContextFiles } from '../../lib/jsonld/context-files';
import { validateContext } from '../../lib/jsonld/context-validation';
import { jsonldContracts } from '../../lib/jsonld/contract';
import { jsonldOperations } from '../../lib/jsonld/operations';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('jsonld', { sessions: walletSessions });
const files = new ContextFiles({ store: deps.store, refs: new PublicRefs(deps.store), validate: validateContext });

export const handler = createGroupHandler({
  group: 'jsonld',
  contracts: jsonldContracts,
  impls: jsonldOperations(files),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
