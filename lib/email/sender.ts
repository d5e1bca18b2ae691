import { AppError } from '../http/errors';
import type { EventPublisher } from '../events/publisher';
import type { ExchangeService } from '../oid4vci/exchanges';
import { keys, tenantScope, type TenantScope } from '../store/keys';
import type { Item, ItemStore } from '../store/port';
import { oid4vciKeys } from '../oid4vci/records';
import { issuableConfiguration, supportedFromItem } from '../oid4vci/supported';
import { ConditionFailedError } from '../store/port';
import { emailKeys, FINAL, type EmailJob, type EmailRecord } from './bulk';

/** How long a delivery holds its recipient (beyond the worker's 60 s timeout). */
const CLAIM_MS = 90_000;
import { MailerRejectedError, sendWithBackoff, type Mailer } from './mailer';
import { composeOfferEmail } from './offer-message';

export interface OfferMailerDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly exchanges: ExchangeService;
  readonly mailer: Mailer;
  /** The sender address (CDK context `emailSender`, locally a fixed address). */
  readonly from: string;
  /** Receives after which the queue sends a message to its DLQ: the last one records the failure. */
  readonly maxReceives: number;
  readonly backoff?: { attempts?: number; baseMs?: number; sleep?: (ms: number) => Promise<void> };
  readonly now?: () => Date;
}

/**
 * The email worker's work for one recipient: an OID4VCI exchange and offer made exactly as
 * `POST /api/v1/oid4vci/issue` makes them (its code lives `time_to_accept` days), then one mail through
 * SES, and the outcome on the recipient's record with an `email.sent` / `email.failed` event. A
 * recipient already sent (or failed for good) is skipped, so a redelivered message mails nobody twice;
 * an offer of an attempt that did not get mailed is deleted before the next attempt makes a new one.
 */
export class OfferMailer {
  private readonly now: () => Date;

  constructor(private readonly deps: OfferMailerDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async run(job: EmailJob, receiveCount: number): Promise<'sent' | 'failed' | 'skipped'> {
    const scope = tenantScope(job.wallet_id);
    const key = emailKeys.record(scope, job.request_id, job.index);
    const existing = await this.deps.store.get(key, { consistent: true });
    if (existing && (existing.state === 'sent' || existing.state === 'failed')) return 'skipped';

    const at = this.now().toISOString();
    const base: EmailRecord = {
      request_id: job.request_id,
      index: job.index,
      email: job.email,
      state: 'sending',
      schema_id: job.schema_id,
      supported_cred_id: job.supported_cred_id,
      exchange_id: null,
      failure_reason: null,
      failure_details: [],
      created_at: existing ? String(existing.created_at) : at,
      updated_at: at,
    };
    // Claim the recipient: only one delivery at a time works on it (a redelivered message, a job queued
    // twice), and a finished record (lease FINAL) is never claimed again.
    try {
      await this.deps.store.write([{ type: 'put', item: { ...key, type: 'email', ...base, lease_until: this.now().getTime() + CLAIM_MS }, condition: { below: { lease_until: this.now().getTime() } } }]);
    } catch (e) {
      if (e instanceof ConditionFailedError) return 'skipped';
      throw e;
    }
    // The offer of an earlier attempt that was not mailed: it is never sent now.
    if (existing?.exchange_id) await this.deps.exchanges.delete(scope, String(existing.exchange_id)).catch(() => undefined);
    try {
      return await this.deliver(scope, job, key, base);
    } catch (e) {
      // The last receive before the DLQ: say so on the record and by event, whatever went wrong.
      if (receiveCount >= this.deps.maxReceives) {
        const current = await this.deps.store.get(key, { consistent: true });
        if (current?.state !== 'failed') await this.fail(scope, { ...base, exchange_id: (current?.exchange_id as string | undefined) ?? null }, 'mail_undeliverable', e instanceof Error ? e.message : 'the mail could not be sent');
      } else {
        // Let the next delivery of this message claim it at once.
        await this.deps.store.write([{ type: 'update', key, set: { lease_until: 0 } }]).catch(() => undefined);
      }
      throw e;
    }
  }

  private async deliver(scope: TenantScope, job: EmailJob, key: ReturnType<typeof emailKeys.record>, base: EmailRecord): Promise<'sent' | 'failed'> {

    let offer;
    try {
      offer = await this.deps.exchanges.issue(scope, { supported_cred_id: job.supported_cred_id, credential_subject: job.credential_subject, expires_in: job.expires_in }, job.base_url);
    } catch (e) {
      // What made the entry valid changed (the configuration deleted, no public DID any more): final.
      if (e instanceof AppError && e.status < 500) return this.fail(scope, base, 'offer_refused', e.message);
      throw e;
    }
    const exchangeId = offer.exchange.exchange_id;
    await this.deps.store.write([{ type: 'update', key, set: { exchange_id: exchangeId, updated_at: this.now().toISOString() } }]);
    const withExchange = { ...base, exchange_id: exchangeId };

    const wallet = await this.deps.store.get(keys.wallet(scope));
    const supported = await this.deps.store.get(oid4vciKeys.supported(scope, job.supported_cred_id));
    const raw = await composeOfferEmail({
      to: job.email,
      from: this.deps.from,
      // Tenant input in a header: line breaks become spaces.
      issuerName: String(wallet?.label ?? `Wallet ${job.wallet_id}`).replace(/[\r\n]+/g, ' '),
      credentialName: credentialName(supported),
      offerUri: offer.credential_offer_uri,
      expiresAt: new Date(this.now().getTime() + job.expires_in * 1000),
    });
    try {
      const { messageId } = await sendWithBackoff(this.deps.mailer, raw, this.deps.backoff);
      const sent = { ...withExchange, state: 'sent' as const, updated_at: this.now().toISOString() };
      await this.deps.store.write([
        { type: 'update', key, set: { state: 'sent', message_id: messageId, updated_at: sent.updated_at, lease_until: FINAL } },
        this.deps.events.stage(scope, 'email.sent', { ...sent }).op,
      ]);
      return 'sent';
    } catch (e) {
      if (e instanceof MailerRejectedError) return this.fail(scope, withExchange, 'mail_rejected', e.message);
      // Throttled past the backoff, or SES unreachable: SQS tries again (run() records the last receive).
      throw e;
    }
  }

  private async fail(scope: TenantScope, record: EmailRecord, reason: string, message: string): Promise<'failed'> {
    if (record.exchange_id) await this.deps.exchanges.delete(scope, record.exchange_id).catch(() => undefined);
    const failed: EmailRecord = { ...record, state: 'failed', failure_reason: reason, failure_details: [{ path: '', message }], updated_at: this.now().toISOString() };
    await this.deps.store.write([
      { type: 'put', item: { ...emailKeys.record(scope, record.request_id, record.index), type: 'email', ...failed, lease_until: FINAL } },
      this.deps.events.stage(scope, 'email.failed', { ...failed }).op,
    ]);
    return 'failed';
  }
}

/** What the mail calls the credential: its configuration's display name, else its id. */
function credentialName(item: Item | undefined): string {
  if (!item) return 'credential';
  const config = issuableConfiguration(supportedFromItem(item));
  return config.display?.find((d) => typeof d.name === 'string')?.name ?? config.id;
}
