import { PEER_DIDS } from '../../lib/didcomm/agent';
import { AgentRuntime } from '../../lib/didcomm/agent-runtime';
import { ConnectionService } from '../../lib/didcomm/connections';
import { didcommContracts } from '../../lib/didcomm/contract';
import { MessageService } from '../../lib/didcomm/messages';
import { didcommOperations } from '../../lib/didcomm/operations';
import { InvitationService } from '../../lib/didcomm/protocols/out-of-band/invitations';
import { SendingService } from '../../lib/didcomm/sending';
import { targetUrlProblem } from '../../lib/webhooks/target-url';
import { createGroupHandler } from '../../lib/http/router';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildDidcommKeyVault } from '../shared/didcomm-keys';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('didcomm', { sessions: walletSessions });
const keys = buildDidcommKeyVault(deps);
const refs = new PublicRefs(deps.store);
// Sends nothing itself (no transport): its decisions' messages are outbox jobs for the outbound worker.
const runtime = new AgentRuntime({ store: deps.store, events: deps.events, keys, dids: PEER_DIDS, timeoutMs: deps.config.webhookTimeoutMs,
  endpointProblem: (url) => targetUrlProblem(url, { allowLoopback: deps.config.webhookAllowLoopback }) });

export const handler = createGroupHandler({
  group: 'didcomm',
  contracts: didcommContracts,
  impls: didcommOperations({
    // Each invitation gets a key of its own; its inline service names the wallet's public reference.
    invitations: new InvitationService({ store: deps.store, events: deps.events, refs, keys }),
    connections: new ConnectionService(deps.store),
    messages: new MessageService(deps.store),
    sending: new SendingService({ store: deps.store, runtime, refs }),
  }),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
