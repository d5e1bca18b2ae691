import { createHash, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { EventPublisher } from '../events/publisher';
import { BadRequestError, ConflictError } from '../http/errors';
import { prefixPage } from '../http/paging';
import { supportedFromItem } from '../oid4vci/supported';
import { SK as OID4VCI_SK } from '../oid4vci/records';
import { keys, type TenantScope } from '../store/keys';
import { ConditionFailedError, type Item, type ItemStore, type WriteOp } from '../store/port';
import type { JobQueue } from '../webhooks/records';
import { tenantMessageGroup } from '../fairness/share';
import { planRecipients, supportedIndex, type EmailEntry, type PlannedFailure } from './recipients';

/**
 * `POST /api/v1/emails/verify` (contract 4.1): every entry is checked, then each recipient becomes one
 * job on the email queue (the worker makes the offer and sends the mail), and the request answers at
 * once. Entries that cannot be sent are recorded (a per-entry record, `GET /api/v1/emails`) with an
 * `email.failed` event. A repeated request — same Idempotency-Key, or the same body within
 * {@link IDEMPOTENCY_HOURS} — queues nothing new and answers as the first did.
 */
export const IDEMPOTENCY_HOURS = 24;
const SEND_CONCURRENCY = 20;
const MAX_STORED_RESULT_BYTES = 350_000;
/** `lease_until` of a finished record: no worker claims it again. */
export const FINAL = Number.MAX_SAFE_INTEGER;

export const EMAIL_SK = { record: 'EML#', request: 'EMLREQ#' } as const;

export const emailKeys = {
  record: (s: TenantScope, requestId: string, index: number) => ({ PK: keys.walletPartition(s), SK: `${EMAIL_SK.record}${requestId}#${String(index).padStart(5, '0')}` }),
  request: (s: TenantScope, keyHash: string) => ({ PK: keys.walletPartition(s), SK: `${EMAIL_SK.request}${keyHash}` }),
};

export type EmailState = 'queued' | 'sending' | 'sent' | 'failed';

/** One recipient of one request, as the API lists it. */
export interface EmailRecord {
  readonly request_id: string;
  readonly index: number;
  readonly email: string;
  readonly state: EmailState;
  readonly schema_id: string;
  readonly supported_cred_id: string | null;
  readonly exchange_id: string | null;
  readonly failure_reason: string | null;
  readonly failure_details: { path: string; message: string }[];
  readonly created_at: string;
  readonly updated_at: string;
}

/** What the email queue carries: one recipient. */
export interface EmailJob {
  readonly wallet_id: string;
  readonly request_id: string;
  readonly index: number;
  readonly email: string;
  readonly schema_id: string;
  readonly supported_cred_id: string;
  readonly credential_subject: Record<string, unknown>;
  readonly expires_in: number;
  readonly base_url: string;
  /** Times the job was put back because its wallet was at its cap (lib/fairness/share.ts). */
  readonly deferrals?: number;
}

export interface BulkResult {
  readonly emailsSuccess: string[];
  readonly emailsFailure: string[];
  readonly invalidEmails: string[];
}

export function emailRecordView(item: Item): EmailRecord {
  return {
    request_id: String(item.request_id),
    index: Number(item.index),
    email: String(item.email),
    state: item.state as EmailState,
    schema_id: String(item.schema_id),
    supported_cred_id: (item.supported_cred_id as string | undefined) ?? null,
    exchange_id: (item.exchange_id as string | undefined) ?? null,
    failure_reason: (item.failure_reason as string | undefined) ?? null,
    failure_details: (item.failure_details as EmailRecord['failure_details'] | undefined) ?? [],
    created_at: String(item.created_at),
    updated_at: String(item.updated_at),
  };
}

export interface BulkEmailDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly queue: JobQueue;
  readonly now?: () => Date;
}

export class BulkEmailService {
  private readonly now: () => Date;

  constructor(private readonly deps: BulkEmailDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async submit(scope: TenantScope, entries: readonly EmailEntry[], baseUrl: string, idempotencyKey: string | undefined): Promise<BulkResult> {
    const bodyHash = createHash('sha256').update(JSON.stringify(entries)).digest('base64url');
    const keyHash = idempotencyKey === undefined ? `body:${bodyHash}` : `key:${createHash('sha256').update(idempotencyKey).digest('base64url')}`;
    const requestKey = emailKeys.request(scope, keyHash);
    const nowS = Math.floor(this.now().getTime() / 1000);
    const existing = await this.deps.store.get(requestKey, { consistent: true });
    if (existing && Number(existing.ttl) > nowS) return this.repeat(scope, existing, bodyHash, entries, baseUrl);

    const requestId = randomUUID();
    const { result, jobs, failures } = await this.plan(scope, requestId, entries, baseUrl);
    // The first answer is kept for repeats, compressed: it must fit the request's item (400 KB).
    const stored = gzipSync(JSON.stringify(result));
    if (stored.length > MAX_STORED_RESULT_BYTES) throw new BadRequestError('The addresses of this request are too long to keep its answer for repeats: send it in smaller requests', 'request_too_large');
    const at = this.now();
    try {
      // The request's record first: a concurrent repeat finds it and answers the same.
      await this.deps.store.write([
        {
          type: 'put',
          item: { ...requestKey, type: 'email_request', request_id: requestId, body_hash: bodyHash, state: 'queueing', result: stored, created_at: at.toISOString(), ttl: nowS + IDEMPOTENCY_HOURS * 3600 },
          condition: { below: { ttl: nowS } },
        },
      ]);
    } catch (e) {
      if (!(e instanceof ConditionFailedError)) throw e;
      return this.repeat(scope, (await this.deps.store.get(requestKey, { consistent: true }))!, bodyHash, entries, baseUrl);
    }
    await this.recordFailures(scope, requestId, failures, at);
    await this.enqueue(jobs);
    await this.deps.store.write([{ type: 'update', key: requestKey, set: { state: 'queued' } }]);
    return result;
  }

  /** Indexes are the entries' positions in the request: a repeat's plan names the same people the same way. */
  private async plan(scope: TenantScope, requestId: string, entries: readonly EmailEntry[], baseUrl: string) {
    const supported = (await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: OID4VCI_SK.supported })).map(supportedFromItem);
    const plan = planRecipients(entries, supportedIndex(supported));
    const result: BulkResult = { emailsSuccess: plan.recipients.map((r) => r.given), emailsFailure: plan.failures.map((f) => f.email), invalidEmails: plan.invalidEmails };
    const jobs: EmailJob[] = plan.recipients.map((r) => ({
      wallet_id: scope.walletId,
      request_id: requestId,
      index: r.position,
      email: r.email,
      schema_id: r.schemaId,
      supported_cred_id: r.supportedCredId,
      credential_subject: r.credentialSubject,
      expires_in: r.expiresIn,
      base_url: baseUrl,
    }));
    const failures = plan.failures.map((f) => ({ ...f, index: f.position }));
    return { result, jobs, failures };
  }

  /**
   * A repeat gets the first answer. If the first stopped while queueing (a crash, a timeout), its jobs are
   * queued again with the same request id and indexes: the worker mails each recipient once.
   */
  private async repeat(scope: TenantScope, existing: Item, bodyHash: string, entries: readonly EmailEntry[], baseUrl: string): Promise<BulkResult> {
    if (existing.body_hash !== bodyHash) throw new ConflictError('This Idempotency-Key was used for a different request', 'idempotency_key_reused');
    if (existing.state === 'queueing') {
      // The first may have failed half way (its caller got a 500 and repeats): queue again. The worker
      // claims each recipient before mailing, so a job queued twice mails once.
      const { jobs, failures } = await this.plan(scope, String(existing.request_id), entries, baseUrl);
      await this.recordFailures(scope, String(existing.request_id), failures, this.now(), true);
      await this.enqueue(jobs);
      await this.deps.store.write([{ type: 'update', key: { PK: existing.PK, SK: existing.SK }, set: { state: 'queued' } }]);
    }
    return JSON.parse(gunzipSync(Buffer.from(existing.result as Uint8Array)).toString('utf8')) as BulkResult;
  }

  /** Failed entries get their record and `email.failed` event (put again on a repeat: the same content). */
  private async recordFailures(scope: TenantScope, requestId: string, failures: readonly (PlannedFailure & { index: number })[], at: Date, repeat = false): Promise<void> {
    const ops: WriteOp[] = failures.flatMap((f) => {
      const record: EmailRecord = {
        request_id: requestId,
        index: f.index,
        email: f.email,
        state: 'failed',
        schema_id: f.schemaId,
        supported_cred_id: null,
        exchange_id: null,
        failure_reason: f.reason,
        // Bounded, so that a transaction of records and events stays far below DynamoDB's 4 MB.
        failure_details: f.details.slice(0, 20).map((d) => ({ path: d.path.slice(0, 200), message: d.message.slice(0, 300) })),
        created_at: at.toISOString(),
        updated_at: at.toISOString(),
      };
      return [
        { type: 'put', item: { ...emailKeys.record(scope, requestId, record.index), type: 'email', ...record, failure_message: f.message, lease_until: FINAL }, condition: 'not_exists' } as WriteOp,
        this.deps.events.stage(scope, 'email.failed', { ...record, failure_message: f.message }).op,
      ];
    });
    // A repeat writes each failure alone: one recorded by the first request stays, with its one event.
    const size = repeat ? 2 : 100;
    for (let i = 0; i < ops.length; i += size) {
      await this.deps.store.write(ops.slice(i, i + size)).catch((e) => {
        if (!(repeat && e instanceof ConditionFailedError)) throw e;
      });
    }
  }

  private async enqueue(jobs: readonly EmailJob[]): Promise<void> {
    const chunk = Math.max(10, Math.ceil(jobs.length / SEND_CONCURRENCY / 10) * 10);
    const sends: Promise<void>[] = [];
    for (let i = 0; i < jobs.length; i += chunk) {
      sends.push(this.deps.queue.send(jobs.slice(i, i + chunk).map((j) => ({ body: JSON.stringify(j), delaySeconds: 0, group: tenantMessageGroup(j.wallet_id) }))));
    }
    await Promise.all(sends);
  }

  async list(scope: TenantScope, filter: { request_id?: string | undefined; state?: EmailState | undefined }) {
    const prefix = filter.request_id ? `${EMAIL_SK.record}${filter.request_id}#` : EMAIL_SK.record;
    const items = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: prefix });
    return items.map(emailRecordView).filter((r) => !filter.state || r.state === filter.state);
  }

  async listPage(scope: TenantScope, page: { limit: number; cursor: string | undefined }, filter: { request_id?: string | undefined; state?: EmailState | undefined }) {
    const prefix = filter.request_id ? `${EMAIL_SK.record}${filter.request_id}#` : EMAIL_SK.record;
    const out = await prefixPage(this.deps.store, keys.walletPartition(scope), prefix, page);
    return { items: out.items.map(emailRecordView).filter((r) => !filter.state || r.state === filter.state), next: out.next };
  }
}

