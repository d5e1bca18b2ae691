import { ulid } from '../ids';
import { keys, type TenantScope } from '../store/keys';
import type { Item, ItemStore, WriteOp } from '../store/port';
import type { EventEnvelope, EventType } from './envelope';

/** How long an event stays readable in its outbox item (deliveries reference it until then). */
export const EVENT_RETENTION_DAYS = 30;

export interface StagedEvent {
  readonly event: EventEnvelope;
  /** Add this to the same transaction as the state change the event reports. */
  readonly op: WriteOp;
}

/**
 * The event-publisher port. Features stage the event into the transaction that stores their state
 * change, so an event exists if and only if the change does; the table's stream then relays it to
 * the webhook queue (at least once). `publish` is for events that are themselves the change (ping).
 */
export interface EventPublisher {
  stage(scope: TenantScope, type: EventType, data: Record<string, unknown>): StagedEvent;
  publish(scope: TenantScope, type: EventType, data: Record<string, unknown>): Promise<EventEnvelope>;
}

export function eventFromItem(item: Item): EventEnvelope {
  return item.event as EventEnvelope;
}

/** The transactional outbox on the single table: `W#<wallet>` / `EVT#<event id>`, kept 30 days. */
export class OutboxPublisher implements EventPublisher {
  constructor(
    private readonly store: ItemStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  stage(scope: TenantScope, type: EventType, data: Record<string, unknown>): StagedEvent {
    const at = this.now();
    const event: EventEnvelope = { id: `evt_${ulid(at.getTime())}`, type, wallet_id: scope.walletId, created_at: at.toISOString(), data };
    const item: Item = {
      ...keys.event(scope, event.id),
      type: 'event',
      event,
      ttl: Math.floor(at.getTime() / 1000) + EVENT_RETENTION_DAYS * 86400,
    };
    return { event, op: { type: 'put', item, condition: 'not_exists' } };
  }

  async publish(scope: TenantScope, type: EventType, data: Record<string, unknown>): Promise<EventEnvelope> {
    const staged = this.stage(scope, type, data);
    await this.store.write([staged.op]);
    return staged.event;
  }
}
