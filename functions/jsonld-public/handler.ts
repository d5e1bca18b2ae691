import { createGroupHandler } from '../../lib/http/router';
import { ContextFiles } from '../../lib/jsonld/context-files';
import { jsonldPublicContracts } from '../../lib/jsonld/contract';
import { jsonldPublicOperations } from '../../lib/jsonld/operations';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('jsonld-public', { sessions: walletSessions });
// One cache for the path's lookups and the files' URLs (the reference ↔ wallet mapping never changes).
const refs = new PublicRefs(deps.store);

export const handler = createGroupHandler({
  group: 'jsonld-public',
  contracts: jsonldPublicContracts,
  impls: jsonldPublicOperations(new ContextFiles({ store: deps.store, refs }), refs),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
