import * as z from 'zod';
import { ProtocolViolation, type AgentContext, type Decision } from '../../agent';
import type { StoredConnection } from '../../records';
import { Envelope, newMessageId, threadOf } from '../common';
import { DIDCOMM_PREFIX } from '../out-of-band/messages';

/** Trust ping 1.0 (Aries RFC 0048): answered when the peer asks; an answer to ours is taken as it is. */
export const TRUST_PING_TYPE = `${DIDCOMM_PREFIX}trust_ping/1.0/ping`;
export const TRUST_PING_RESPONSE_TYPE = `${DIDCOMM_PREFIX}trust_ping/1.0/ping_response`;

const Ping = Envelope.extend({ response_requested: z.boolean().optional(), comment: z.string().max(1024).optional() });

export function onPing(_ctx: AgentContext, raw: unknown, c: StoredConnection): Decision {
  const parsed = Ping.safeParse(raw);
  if (!parsed.success) throw new ProtocolViolation('malformed', 'malformed trust ping');
  if (parsed.data.response_requested === false || !c.peer) return { writes: [], outbound: [] };
  const response = { '@type': TRUST_PING_RESPONSE_TYPE, '@id': newMessageId(), '~thread': { thid: threadOf(parsed.data) } };
  return { writes: [], outbound: [{ connectionId: c.connection_id, to: { endpoint: c.peer.endpoint, recipientKeys: c.peer.recipient_keys, routingKeys: c.peer.routing_keys }, senderVerkey: c.my_verkey, message: response }] };
}
