import type { EventPublisher } from '../../../events/publisher';
import { AppError } from '../../../http/errors';
import type { TenantScope } from '../../../store/keys';
import type { ItemStore } from '../../../store/port';
import { outboundJobWrites } from '../../outbound';
import { didcommKeys, storedConnectionFromItem } from '../../records';
import { IssueRefused, type ExchangeToIssue, type Issued } from './formats';
import { abandon, CREDENTIAL_FORMATS, toConnectionlessHolder, toHolder, transition } from './handlers';
import { issueMessage } from './messages';
import { exchangeKeys, storedExchangeFromItem } from './records';

/** The issuing half of a format (ld_proof: lib/jsonld/ld-proof-issuer.ts): signs what the checked request asks for. */
export interface FormatIssuer {
  readonly name: string;
  /** The credential attachment; {@link IssueRefused} (or a 4xx AppError) when it cannot be issued, anything else is a fault of ours (retried). */
  issue(scope: TenantScope, exchange: ExchangeToIssue): Promise<Issued>;
}

export type IssueOutcome = 'issued' | 'refused' | 'skipped';

/**
 * The issuing worker's step (functions/workers/credential-issuer.ts), in the wallet's session: an
 * exchange in request-received is signed by its format and moves to credential-issued, with the
 * issue-credential message as an outbox job, in one transaction conditioned on the state read (a
 * job SQS hands over twice signs twice at most and sends once). A refusal abandons the exchange and
 * tells the holder.
 */
export class CredentialIssuing {
  private readonly now: () => Date;

  constructor(
    private readonly deps: {
      readonly store: ItemStore;
      readonly events: EventPublisher;
      readonly issuers: readonly FormatIssuer[];
      readonly now?: () => Date;
    },
  ) {
    this.now = deps.now ?? (() => new Date());
  }

  async run(scope: TenantScope, exchangeId: string): Promise<{ outcome: IssueOutcome; detail?: string }> {
    const { store, events } = this.deps;
    const item = await store.get(exchangeKeys.exchange(scope, exchangeId), { consistent: true });
    if (!item) return { outcome: 'skipped', detail: 'no such exchange' };
    const x = storedExchangeFromItem(item);
    if (x.state !== 'request-received') return { outcome: 'skipped', detail: `state ${x.state}` };
    // Connectionless: no connection; the holder's service was recorded with its request.
    if (x.connection_id === null && !x.connectionless?.holder) return { outcome: 'skipped', detail: 'no connection and no holder service' };
    const connItem = x.connection_id === null ? undefined : await store.get(didcommKeys.connection(scope, x.connection_id), { consistent: true });
    const c = connItem ? storedConnectionFromItem(connItem) : null;
    const format = CREDENTIAL_FORMATS[x.format];
    const issuer = this.deps.issuers.find((i) => i.name === x.format);
    const refuse = async (reason: string) => {
      const d = abandon(events, scope, x, c?.state === 'active' ? c : null, this.now(), reason);
      await store.write([...d.writes, ...outboundJobWrites(scope, d.outbound, this.now())]);
      return { outcome: 'refused' as const, detail: reason };
    };
    if (x.connection_id !== null && (!c || c.state !== 'active' || !c.peer)) return refuse('the connection is no longer active');
    if (!format || !issuer) return refuse(`this service issues no ${x.format} credentials here`);
    let issued: Issued;
    try {
      issued = await issuer.issue(scope, { credential_exchange_id: x.credential_exchange_id, offer: x.offer, request: x.request, format_options: x.format_options });
    } catch (err) {
      if (err instanceof IssueRefused) return refuse(err.message);
      if (err instanceof AppError && err.status >= 400 && err.status < 500) return refuse(`${err.code}: ${err.message}`);
      throw err;
    }
    const at = this.now();
    const { writes } = transition(events, scope, x, 'credential-issued', at, { credential: issued.attachment, format_record: { ...issued.record } });
    const message = issueMessage({ threadId: x.thread_id, format: format.issueFormat, attachId: x.format, data: issued.attachment });
    try {
      await store.write([...writes, ...outboundJobWrites(scope, [c ? toHolder(c, message) : toConnectionlessHolder(x, message)!], at)]);
    } catch (err) {
      // Another run of the same job (SQS hands a message over at least once) got there first.
      if ((err as Error).name === 'ConditionFailedError') return { outcome: 'skipped', detail: 'the exchange changed meanwhile' };
      throw err;
    }
    return { outcome: 'issued' };
  }
}
