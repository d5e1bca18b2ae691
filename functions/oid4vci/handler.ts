import { createGroupHandler } from '../../lib/http/router';
import { oid4vciAdminContracts } from '../../lib/oid4vci/contract';
import { ExchangeService } from '../../lib/oid4vci/exchanges';
import { oid4vciAdminOperations } from '../../lib/oid4vci/operations';
import { SupportedCredentialService } from '../../lib/oid4vci/supported';
import { StatusAllocator } from '../../lib/status-lists/allocation';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('oid4vci', { sessions: walletSessions });
const supported = new SupportedCredentialService({ store: deps.store });
// DIDs are read from the wallet's partition only: nothing here signs, so no key manager.
// The wallet's public reference names it in its offers (read from its record once, then cached).
const refs = new PublicRefs(deps.store);
const exchanges = new ExchangeService({ store: deps.store, events: deps.events, refs, status: new StatusAllocator({ store: deps.store, events: deps.events, refs }) });

export const handler = createGroupHandler({
  group: 'oid4vci',
  contracts: oid4vciAdminContracts,
  impls: oid4vciAdminOperations(supported, exchanges),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
