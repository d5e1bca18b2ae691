import { setGlobalConfig } from '@openid4vc/utils';
import { createGroupHandler } from '../../lib/http/router';
import { issuerProtocolContracts } from '../../lib/oid4vci/protocol/contract';
import { IssuerSecretSource } from '../../lib/oid4vci/protocol/issuer-secrets';
import { issuerProtocolOperations } from '../../lib/oid4vci/protocol/operations';
import { IssuerProtocol } from '../../lib/oid4vci/protocol/service';
import { StatusAllocator } from '../../lib/status-lists/allocation';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildKeyManager } from '../shared/issuer-keys';
import { macSecrets } from '../shared/secrets';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('oid4vci-issuer', { secrets: macSecrets, sessions: walletSessions });
// The libraries insist on https identifiers; the local runtime serves plain http on loopback only.
if (deps.config.keyBackend === 'local' && deps.config.publicBaseUrl?.startsWith('http://')) setGlobalConfig({ allowInsecureUrls: true });
// One cache for the path's lookups and the status lists' URLs (the reference ↔ wallet mapping never changes).
const refs = new PublicRefs(deps.store);

export const handler = createGroupHandler({
  group: 'oid4vci-issuer',
  contracts: issuerProtocolContracts,
  impls: issuerProtocolOperations(
    new IssuerProtocol({ store: deps.store, events: deps.events, keyManager: buildKeyManager(deps), secrets: new IssuerSecretSource(deps.secrets), status: new StatusAllocator({ store: deps.store, events: deps.events, refs }) }),
    refs,
  ),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
