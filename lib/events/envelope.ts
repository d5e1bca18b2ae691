import * as z from 'zod';

/**
 * The event catalogue: every topic a wallet's webhook targets can receive. Later features add their
 * topics here (and to the catalogue in docs/webhooks.md); `data` is always the record as the API returns it,
 * never a secret.
 */
export const EVENT_TYPES = {
  ping: 'A test delivery asked for with POST /api/v1/settings/webhook-target-urls/ping.',
  'api_key.created': "An API key of the wallet was created (data: the key's record, never its value).",
  'api_key.revoked': 'An API key of the wallet was revoked or deleted (data: the key record).',
  'oid4vci.exchange.created': 'An OID4VCI exchange and its credential offer were created (data: the exchange record).',
  'oid4vci.exchange.redeemed': "The wallet traded the exchange's pre-authorized code for an access token (data: the exchange).",
  'oid4vci.exchange.issued': 'Credentials were issued to the wallet (data: the exchange, with how many).',
  'oid4vci.exchange.accepted': 'The wallet notified that it accepted (stored) the credential (data: the exchange).',
  'oid4vci.exchange.deleted': 'The wallet notified that the holder deleted or refused the credential (data: the exchange).',
  'oid4vci.exchange.failed': 'The exchange failed: tx_code attempts exhausted, the credential request denied (configuration deleted or invalid, issuer DID gone), or the wallet reported a failure (data: the exchange, with failure_reason).',
  'oid4vci.exchange.expired': "An unredeemed exchange's code, or a redeemed exchange's unused access token, outlived its lifetime (data: the exchange).",
  'oid4vci.exchange.removed': 'The exchange record was deleted through the API; its code no longer works (data: the exchange).',
  'status_list.definition.created': 'A status list definition was created (data: the definition).',
  'status_list.definition.deleted': 'A status list definition was deleted; with recursive_delete its lists and entries are removed in the background (data: the definition, with recursive_delete).',
  'status_list.entry.assigned': "A credential got its status list entry at issuance (data: the entry, with every index of the exchange's batch).",
  'status_list.entry.status_changed': 'An entry\'s status was set (revoked, suspended, reinstated, a message status); the list is re-published in the background (data: the entry, with previous_status).',
  'email.sent': 'A bulk-email recipient was sent their credential offer (data: the recipient record, with its exchange_id).',
  'email.failed': 'A bulk-email recipient will not get an offer: refused when the request was checked, or the mail could not be sent (data: the recipient record, with failure_reason).',
  'status_list.published': 'A status list was signed and published at its public URL (data: definition_id, list, format, url, published_at, expires_at).',
  'oid4vp.presentation.request_created': 'A presentation request was created; its presentation is in request-created (data: the presentation record).',
  'oid4vp.presentation.request_retrieved': "The wallet fetched the signed request object (data: the presentation, state request-retrieved).",
  'oid4vp.presentation.valid': 'The wallet answered and everything verified (data: the presentation, with matched_credentials).',
  'oid4vp.presentation.invalid': 'The wallet answered and the presentation was refused, or the wallet declined (data: the presentation, with errors: one code each).',
  'oid4vp.presentation.expired': 'A request was not answered within its lifetime (data: the presentation).',
  'oid4vp.presentation.removed': 'A presentation was deleted through the API; its request no longer works (data: the presentation).',
  'invitation.created': 'A DIDComm Out-of-Band invitation was created with POST /api/v1/invitations (data: the invitation record).',
  'invitation.deleted': 'An invitation was deleted through the API; it accepts no more connections (data: the invitation as it was).',
  'connection.request': 'We accepted another agent\'s invitation and sent our DID Exchange request (data: the connection, state request).',
  'connection.response': 'An agent answered one of our invitations; we sent our DID Exchange response (data: the connection, state response).',
  'connection.active': 'A connection completed its DID Exchange and can carry messages (data: the connection, state active).',
  'connection.error': 'The peer abandoned the exchange with a problem report, or the exchange failed (data: the connection, state error, with error_msg).',
  'message.received': 'A basic message arrived on a connection (data: the message record).',
  'message.sent': 'A basic message sent with POST /api/v1/messages was accepted by the peer\'s endpoint (data: the message record, state sent).',
  'message.failed': 'A basic message could not be delivered: the peer\'s endpoint refused it or failed every retry (data: the message record, state failed, with failure_reason).',
  'anoncreds.credential_definition.finished': "A credential definition's keys were made and it is published at its url (data: the definition record, with credential_definition_id).",
  'anoncreds.credential_definition.failed': 'A credential definition could not be made; its tag is free again (data: the definition record, state failed, with error_msg).',
  'credential.offer_sent': 'A credential offer (Issue Credential 2.0) was made with POST /api/v1/credentials/json-ld: sent, queued for the connection an invitation will produce, or carried by an invitation (data: the exchange, state offer-sent).',
  'credential.request_received': 'The holder requested the offered credential and the request matched the offer; it is being signed (data: the exchange, state request-received).',
  'credential.issued': 'The credential was signed and sent to the holder (data: the exchange, state credential-issued).',
  'credential.done': 'The holder acknowledged the credential (data: the exchange, state done).',
  'credential.abandoned': 'The exchange ended without a credential: a request that did not match the offer, a problem report from the holder, or a refusal at signing (data: the exchange, state abandoned, with error_msg).',
  'credential.revoked': 'The credential issued in the exchange was revoked (data: the exchange, state credential-revoked).',
} as const;

export type EventType = keyof typeof EVENT_TYPES;

export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as [EventType, ...EventType[]];

export const eventEnvelopeSchema = z
  .object({
    id: z.string().describe('evt_ + ULID; also the webhook-id header, stable across retries and redeliveries'),
    type: z.enum(EVENT_TYPE_NAMES),
    wallet_id: z.string(),
    created_at: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'EventEnvelope' });

export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;

export const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The wire form: fields in the documented order whatever order storage returned them in. */
export function serializeEvent(e: EventEnvelope): string {
  return JSON.stringify({ id: e.id, type: e.type, wallet_id: e.wallet_id, created_at: e.created_at, data: e.data });
}
