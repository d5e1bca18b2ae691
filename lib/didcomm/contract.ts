import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { PublicRefPath, Timestamp } from '../tenancy/contract';
import { CONNECTION_SORT_FIELDS, DEFAULT_PAGE_SIZE, MAX_LISTING_DEPTH, MAX_PAGE_SIZE } from './connections';
import { INBOUND_MEDIA_TYPES } from './inbound';
import { MAX_CONTENT } from './protocols/basic-message/messages';
import { MAX_INVITATION_BYTES } from './protocols/out-of-band/messages';
import { CONNECTION_STATES, INVITATION_STATES, MAX_INVITATION_ID, MESSAGE_DIRECTIONS, MESSAGE_STATES, RFC23_STATES } from './records';

/**
 * Schemas of the DIDComm admin routes: invitations (not in the contract), connections (contract 4.12)
 * and basic messages (contract 4.8, 2.14). Record fields follow ACA-Py where the contract shows none.
 */
const JsonObject = z.record(z.string(), z.unknown());
const Deleted = z.object({}).meta({ description: 'Empty object: deleted' });

export const InvitationIdParam = z
  .string()
  .regex(/^[1-9][0-9]{0,9}$/, 'an invitation_id: a positive integer')
  .refine((v) => Number(v) <= MAX_INVITATION_ID, 'an invitation_id: a positive integer')
  .meta({ description: 'The invitation_id (integer) POST /api/v1/invitations answered' });
const RecordId = z.string().min(1).max(128);

const Invitation = JsonObject.meta({ title: 'OutOfBandInvitation', description: 'Out-of-Band 1.1 invitation message (Aries RFC 0434): @type, @id, label, handshake_protocols (DID Exchange 1.1, 1.0), services' });

const InvitationView = z
  .object({
    invitation_id: z.number().int(),
    invitation_msg_id: z.string().meta({ description: "The invitation's @id (the pthid of the requests answering it)" }),
    invitation_key: z.string().meta({ description: 'The Ed25519 verkey (base58) of its inline service' }),
    invitation: Invitation,
    invitation_url: z.string(),
    label: z.string(),
    alias: z.string().nullable().meta({ description: 'Given to the connections it produces' }),
    goal_code: z.string().nullable(),
    goal: z.string().nullable(),
    multi_use: z.boolean(),
    state: z.enum(INVITATION_STATES).meta({ description: 'await-response; done once a single-use invitation produced its connection' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'InvitationRecord' });

const CreatedInvitation = z
  .object({
    invitation_id: z.number().int(),
    invitation_url: z.string().meta({ description: 'The service endpoint with ?oob=<base64url of the invitation>' }),
    invitation: Invitation,
    qr_png_base64: z.string().optional().meta({ description: 'The invitation URL as a QR code (PNG, base64), when asked for with qr: true' }),
  })
  .meta({ title: 'CreatedInvitation' });

const ConnectionView = z
  .object({
    connection_id: z.string(),
    contact_id: z.string().meta({ description: 'The contract’s name for the connection id (same value)' }),
    state: z.enum(CONNECTION_STATES),
    rfc23_state: z.enum(RFC23_STATES),
    their_label: z.string().nullable(),
    their_did: z.string().nullable(),
    my_did: z.string().nullable(),
    their_role: z.enum(['invitee', 'inviter']),
    invitation_key: z.string().nullable(),
    invitation_msg_id: z.string().nullable(),
    invitation_mode: z.enum(['once', 'multi']),
    connection_protocol: z.enum(['didexchange/1.1', 'didexchange/1.0']),
    alias: z.string().nullable(),
    invitation_id: z.number().int().nullable().meta({ description: 'Our invitation that produced it; null when we accepted theirs' }),
    error_msg: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'Connection' });

const MessageView = z
  .object({
    message_id: z.string(),
    invitation_id: z.number().int().nullable(),
    contact_id: z.string(),
    message: z.string(),
    direction: z.enum(MESSAGE_DIRECTIONS),
    sent_time: Timestamp,
    state: z.enum(MESSAGE_STATES),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'BasicMessage', description: 'Contract 2.14 (invitation_id, contact_id, message) with its id, direction, sent time and state' });

const Text = (max: number) => z.string().min(1).max(max);

export const didcommContracts = {
  createInvitation: {
    body: z.strictObject({
      label: Text(256).optional().meta({ description: "The label peers show for us (default: the wallet's label)" }),
      alias: Text(256).optional().meta({ description: 'Our name for the connections it produces (kept here, never sent)' }),
      multi_use: z.boolean().optional().meta({ description: 'Accept any number of connections (default false: one)' }),
      goal_code: Text(256).optional(),
      goal: Text(1024).optional(),
      qr: z.boolean().optional().meta({ description: 'Also answer the invitation URL as a QR code (qr_png_base64)' }),
    }),
    bodyOptional: true,
    response: CreatedInvitation,
    errors: [400, 401, 403],
  },
  listInvitations: { query: z.object({ ...PAGING_QUERY }), paged: true, response: z.array(InvitationView), errors: [400, 401, 403] },
  getInvitation: { params: z.strictObject({ invitation_id: InvitationIdParam }), response: InvitationView, errors: [400, 401, 403, 404] },
  deleteInvitation: { params: z.strictObject({ invitation_id: InvitationIdParam }), response: Deleted, errors: [400, 401, 403, 404, 409] },
  listConnections: {
    query: z.object({
      'sort-field': z.enum(CONNECTION_SORT_FIELDS).optional().meta({ description: 'created_at (the only one: connections are kept in creation order)' }),
      'sort-direction': z.enum(['asc', 'desc']).optional().meta({ description: 'desc (default): newest first' }),
      'page-size': z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().meta({ description: `Connections per page (default ${DEFAULT_PAGE_SIZE})` }),
      'current-page': z.coerce.number().int().min(1).optional().meta({ description: `Page number from 1 (default 1); current-page × page-size at most ${MAX_LISTING_DEPTH}` }),
      'item-count': z.coerce.number().int().min(0).optional().meta({ description: 'How many connections the listing covers in all, in sort order: pages past it are shorter or empty (default: all)' }),
    }),
    response: z.array(ConnectionView),
    errors: [400, 401, 403],
  },
  getConnection: { params: z.strictObject({ id: RecordId }), response: ConnectionView, errors: [400, 401, 403, 404] },
  sendMessage: {
    body: z.object({
      invitation_id: z.number().int().min(1).max(MAX_INVITATION_ID).optional().meta({ description: 'Send on the connection this invitation produced (only when it produced exactly one)' }),
      contact_id: RecordId.optional().meta({ description: 'The connection id (contact) to send to' }),
      message: z.string().max(MAX_CONTENT).optional().meta({ description: `The text (required in practice: at most ${MAX_CONTENT} characters)` }),
    }),
    bodyOptional: true,
    response: z.object({ success: z.string().meta({ description: 'Message <message_id> queued for contact <contact_id>' }) }).meta({ title: 'MessageQueued' }),
    errors: [400, 401, 403, 404, 409],
  },
  receiveInvitation: {
    body: z.strictObject({
      invitation_url: z.string().min(1).max(MAX_INVITATION_BYTES).optional().meta({ description: 'An Out-of-Band invitation URL with the invitation inline (oob=)' }),
      invitation: JsonObject.optional().meta({ description: 'The Out-of-Band 1.1 (or 1.0) invitation JSON' }),
      alias: Text(256).optional().meta({ description: 'Our name for the connection (kept here, never sent)' }),
      label: Text(256).optional().meta({ description: "The label the inviter shows for us (default: the wallet's label)" }),
    }),
    response: ConnectionView,
    errors: [400, 401, 403, 503],
  },
  listMessages: { query: z.object({ ...PAGING_QUERY }), paged: true, response: z.array(MessageView), errors: [400, 401, 403] },
  getMessage: { params: z.strictObject({ id: RecordId }), response: MessageView, errors: [400, 401, 403, 404] },
} satisfies OperationContracts;

/**
 * The public endpoint peers post envelopes to (`POST /didcomm/{public_ref}`): an RFC 0019 envelope
 * (a JWE in JSON serialization), sent as `application/didcomm-envelope-enc`, the older
 * `application/ssi-agent-wire`, or JSON. 202 with no body once it is stored and queued.
 */
export const didcommPublicContracts = {
  postDidcommEnvelope: {
    params: z.strictObject({ public_ref: PublicRefPath }),
    body: JsonObject.meta({ title: 'DidcommEnvelope', description: 'Aries RFC 0019 envelope: {protected, iv, ciphertext, tag}, the protected header naming the recipients' }),
    requestMediaTypes: INBOUND_MEDIA_TYPES,
    response: z.undefined(),
    status: 202,
    errors: [400, 404, 413, 415],
  },
} satisfies OperationContracts;
