import { anoncredsContracts } from '../../lib/anoncreds/contract';
import { anoncredsOperations } from '../../lib/anoncreds/operations';
import { AnonCredsRegistry } from '../../lib/anoncreds/registry';
import { createGroupHandler } from '../../lib/http/router';
import { buildDeps, createLogger } from '../shared/deps';
import { walletSessions } from '../shared/sessions';

const deps = buildDeps('anoncreds', { sessions: walletSessions });

export const handler = createGroupHandler({
  group: 'anoncreds',
  contracts: anoncredsContracts,
  impls: anoncredsOperations(new AnonCredsRegistry({ store: deps.store, events: deps.events })),
  logger: createLogger(deps.config.serviceName),
  publicBaseUrl: deps.config.publicBaseUrl,
});
