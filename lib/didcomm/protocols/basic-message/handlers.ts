import { ulid } from '../../../ids';
import { EVENT_RETENTION_DAYS } from '../../../events/publisher';
import { ProtocolViolation, type AgentContext, type Decision } from '../../agent';
import { didcommKeys, messageFromItem, type MessageRecord, type StoredConnection } from '../../records';
import { newMessageId } from '../common';
import { BASIC_MESSAGE_TYPE, BasicMessage } from './messages';

/** RFC 0095 `sent_time`, which agents write in more than one form: kept as given when it is a date, else ours. */
function sentTime(value: string | undefined, fallback: Date): string {
  const t = value === undefined ? NaN : Date.parse(value.replace(' ', 'T'));
  return Number.isNaN(t) ? fallback.toISOString() : new Date(t).toISOString();
}

export function messageItem(ctx: AgentContext, m: MessageRecord) {
  return { ...didcommKeys.message(ctx.scope, m.message_id), type: 'didcomm_message', ...m };
}

/** A basic message on an active connection: stored, and `message.received`. */
export function onBasicMessage(ctx: AgentContext, raw: unknown, c: StoredConnection): Decision & { message: MessageRecord } {
  const parsed = BasicMessage.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed basic message');
  const at = ctx.now.toISOString();
  const message: MessageRecord = {
    message_id: ulid(ctx.now.getTime()),
    invitation_id: c.invitation_id,
    contact_id: c.connection_id,
    message: parsed.data.content,
    direction: 'received',
    sent_time: sentTime(parsed.data.sent_time, ctx.now),
    state: 'received',
    created_at: at,
    updated_at: at,
  };
  return {
    writes: [
      { type: 'put', item: messageItem(ctx, message), condition: 'not_exists' },
      // Kept as long as events are: a replay within that time is refused by the transaction.
      { type: 'put', item: { ...didcommKeys.seen(ctx.scope, c.connection_id, parsed.data['@id']), type: 'didcomm_seen', ttl: Math.floor(ctx.now.getTime() / 1000) + EVENT_RETENTION_DAYS * 86400 }, condition: 'not_exists' },
      ctx.events.stage(ctx.scope, 'message.received', { ...messageFromItem(messageItem(ctx, message)) }).op],
    outbound: [],
    message,
  };
}

/** A basic message we send: stored as queued with the outbound job; the outbound worker marks it sent or failed. */
export function sendBasicMessage(ctx: AgentContext, c: StoredConnection, content: string): Decision & { message: MessageRecord } {
  if (c.state !== 'active' || !c.peer) throw new ProtocolViolation('not_active', 'the connection is not active');
  const at = ctx.now.toISOString();
  const message: MessageRecord = {
    message_id: ulid(ctx.now.getTime()),
    invitation_id: c.invitation_id,
    contact_id: c.connection_id,
    message: content,
    direction: 'sent',
    sent_time: at,
    state: 'queued',
    created_at: at,
    updated_at: at,
  };
  const wire = { '@type': BASIC_MESSAGE_TYPE, '@id': newMessageId(), content, sent_time: at, '~l10n': { locale: 'en' } };
  return {
    writes: [{ type: 'put', item: messageItem(ctx, message), condition: 'not_exists' }],
    outbound: [{ connectionId: c.connection_id, to: { endpoint: c.peer.endpoint, recipientKeys: c.peer.recipient_keys, routingKeys: c.peer.routing_keys }, senderVerkey: c.my_verkey, message: wire, messageId: message.message_id }],
    message,
  };
}
