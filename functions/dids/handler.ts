import { didContracts } from '../../lib/dids/contract';
import { didOperations } from '../../lib/dids/operations';
import { DidService } from '../../lib/dids/service';
import { createGroupHandler } from '../../lib/http/router';
import { TaaService } from '../../lib/taa/service';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';
import { buildKeyManager } from '../shared/issuer-keys';
import { buildDidcommKeyVault } from '../shared/didcomm-keys';
import { PublicDidDidcomm } from '../../lib/didcomm/public-did';
import { PublicRefs } from '../../lib/tenancy/public-refs';

const deps = buildDeps('dids', { sessions: walletSessions });
const { config } = deps;
const dids = new DidService({
  store: deps.store,
  keyManager: buildKeyManager(deps),
  // set-public-did needs the wallet's acceptance of the publication agreement.
  taa: new TaaService(deps.store, config.taa),
  indyNamespace: config.indyNamespace,
  limits: { maxDids: config.maxDidsPerWallet, maxCreationsPerMinute: config.maxDidCreationsPerMinute },
  // The public DID's DIDComm service: its key is a sealed software key (lib/didcomm/key-vault.ts), not a KMS issuer key.
  didcomm: new PublicDidDidcomm({ store: deps.store, keys: buildDidcommKeyVault(deps), refs: new PublicRefs(deps.store) }),
});

export const handler = createGroupHandler({
  group: 'dids',
  contracts: didContracts,
  impls: didOperations(dids),
  logger: createLogger(config.serviceName),
  publicBaseUrl: config.publicBaseUrl,
});
