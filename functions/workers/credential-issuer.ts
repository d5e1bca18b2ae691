import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { AnonCredsIssuer } from '../../lib/anoncreds/issuer';
import { CredentialIssuing } from '../../lib/didcomm/protocols/issue-credential-v2/issuing';
import { parseIssueJob, type IssueJob } from '../../lib/didcomm/protocols/issue-credential-v2/handlers';
import { runBatchFairly, tenantMessageGroup } from '../../lib/fairness/share';
import { ContextFiles } from '../../lib/jsonld/context-files';
import { validateContext } from '../../lib/jsonld/context-validation';
import { LdProofIssuer } from '../../lib/jsonld/issuance';
import { tenantScope } from '../../lib/store/keys';
import { PublicRefs } from '../../lib/tenancy/public-refs';
import { buildDeps, createLogger } from '../shared/deps';
import { buildCredDefKeySealer } from '../shared/anoncreds-keys';
import { workerFairShare } from '../shared/fair-share';
import { buildKeyManager } from '../shared/issuer-keys';
import { buildJobQueue } from '../shared/job-queue';
import { walletSessions } from '../shared/sessions';

/**
 * The issuing worker: each message names a credential exchange whose holder's request the inbound
 * DIDComm worker checked (lib/didcomm/protocols/issue-credential-v2/). In the wallet's session it
 * signs the credential (ld_proof: the JSON-LD signing stack, through KMS; anoncreds: CL signatures on
 * BigInt with the definition's sealed key) and commits the exchange as
 * credential-issued with the issue-credential message as an outbox job. It carries the signing stack
 * so that the inbound worker does not. Fair between wallets (lib/fairness): a wallet at its cap has its
 * jobs put back, delayed. Our own faults fail the message; SQS redrives it (DLQ after 5 receives).
 */
export function createHandler() {
  const deps = buildDeps('credential-issuer', { sessions: walletSessions });
  const logger = createLogger(deps.config.serviceName);
  const files = new ContextFiles({ store: deps.store, refs: new PublicRefs(deps.store), validate: validateContext });
  const issuing = new CredentialIssuing({
    store: deps.store,
    events: deps.events,
    issuers: [
      new LdProofIssuer({ store: deps.store, keyManager: buildKeyManager(deps), contexts: (scope, baseUrl) => files.lookupFor(scope, baseUrl) }),
      // AnonCreds: the definition's private key opened with the wallet's data key (Decrypt only), in memory for the signature.
      new AnonCredsIssuer({ store: deps.store, sealer: buildCredDefKeySealer(deps) }),
    ],
  });
  const queue = buildJobQueue(deps, 'credential-issue');
  const { share, deferred } = workerFairShare(deps, logger, 'credential-issue');

  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.addContext(context);
    const jobs: { id: string; job: IssueJob }[] = [];
    for (const r of event.Records) {
      let job: IssueJob | null = null;
      try {
        job = parseIssueJob(JSON.parse(r.body));
      } catch {
        job = null;
      }
      if (job) jobs.push({ id: r.messageId, job });
      else logger.error('not a credential issue job; dropped', { message_id: r.messageId });
    }
    const { failed } = await runBatchFairly(share, jobs, {
      walletOf: (e) => e.job.wallet_id,
      run: async ({ job }) => {
        try {
          const out = await issuing.run(tenantScope(job.wallet_id), job.exchange_id);
          logger.info('credential exchange handled', { wallet_id: job.wallet_id, exchange_id: job.exchange_id, ...out });
        } catch (err) {
          logger.error('credential issue job failed; SQS retries it', { wallet_id: job.wallet_id, exchange_id: job.exchange_id, error: err as Error });
          throw err;
        }
      },
      defer: async (entries, refusal) => {
        await queue.send(entries.map((e) => ({ body: JSON.stringify(e.job), delaySeconds: share.deferSeconds(0), group: tenantMessageGroup(e.job.wallet_id) })));
        logger.info('credential issue jobs deferred: wallet at its cap', { wallet_id: entries[0]!.job.wallet_id, jobs: entries.length, refusal });
        deferred(refusal, entries.length);
      },
    });
    return { batchItemFailures: failed.map((e) => ({ itemIdentifier: e.id })) };
  };
}

export const handler = createHandler();
