import { ConnectionService } from '../../lib/didcomm/connections';
import { didcommContracts } from '../../lib/didcomm/contract';
import { MessageService } from '../../lib/didcomm/messages';
import { didcommOperations } from '../../lib/didcomm/operations';
import { InvitationService } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { createGroupHandler } from '../../lib/http/router';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildDidcommKeyVault } from '../shared/didcomm-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('didcomm', { sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'didcomm',
  contracts: didcommContracts,
  impls: didcommOperations({
    // Each invitation gets a key of its own; its inline service names the wallet's public reference.
    invitations: new InvitationService({ store: deps.store, events: deps.events, refs: new PublicRefs(deps.store), keys: buildDidcommKeyVault(deps, deps.config.keyBackend === 'kms' ? deps.config.didcommKmsKeyId : undefined) }),
    connections: new ConnectionService(deps.store),
    messages: new MessageService(deps.store),
  }),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
