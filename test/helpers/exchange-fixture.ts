import type { StoredExchange } from '../../lib/didcomm/protocols/issue-credential-v2/records';

/** A stored issuer-side exchange for tests that write one directly: a fresh offer on a connection, unless `fields` say otherwise. */
export function storedExchange(id: string, fields: Partial<StoredExchange> = {}): StoredExchange {
  const at = fields.created_at ?? new Date().toISOString();
  return {
    credential_exchange_id: id,
    connection_id: 'conn-1',
    invitation_id: null,
    invitation_url: null,
    thread_id: `thread-${id}`,
    parent_thread_id: null,
    role: 'issuer',
    initiator: 'self',
    state: 'offer-sent',
    format: 'anoncreds',
    revocation_def_id: null,
    error_msg: null,
    created_at: at,
    updated_at: at,
    offer: {},
    request: null,
    credential: null,
    offer_message: null,
    format_options: {},
    connectionless: null,
    format_record: null,
    ...fields,
  };
}
