import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { PublicRefPath, Timestamp } from '../tenancy/contract';
import { STATUS_SIZES } from './encoding';
import { LIST_TYPES } from './records';
import { LIMITS } from './service';

/** Schemas of the status-list routes (contract 4.3) and of the public lists. */

export const STATUS_PURPOSES = ['revocation', 'suspension', 'refresh', 'message'] as const;

const DefId = z.string().uuid().meta({ description: 'A status list definition id' });
const StatusMessage = z.strictObject({ status: z.string().max(4).meta({ description: 'The value in hex, 0x0 to 0xff' }), message: z.string().min(1).max(200) });

const DefinitionView = z
  .object({
    id: z.string(),
    wallet_id: z.string(),
    supported_cred_id: z.string().nullable().meta({ description: 'Credentials issued for this supported credential get an entry at issuance' }),
    status_purpose: z.enum(STATUS_PURPOSES),
    status_size: z.number().int().meta({ description: 'Bits per status: 1, or 2, 4, 8 for message' }),
    status_message: z.array(StatusMessage).nullable(),
    shard_size: z.number().int(),
    list_size: z.number().int(),
    list_type: z.enum(LIST_TYPES).meta({ description: 'ietf (SD-JWT VC) or w3c (jwt_vc_json): the format credentials point to' }),
    issuer_did: z.string().meta({ description: 'Signs the published lists' }),
    verification_method: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'StatusListDefinition' });

const DefinitionDetail = DefinitionView.extend({
  entries_assigned: z.number().int().meta({ description: 'Entries handed out so far (credentials, counting each of a batch)' }),
  status_lists: z.array(z.string()).meta({ description: "The lists' public URLs in list_type's format: those in use, then the spare the next entries go to" }),
}).meta({ title: 'StatusListDefinitionDetail' });

const EntryView = z
  .object({
    list: z.number().int().meta({ description: 'The list number (0-based) of the first credential' }),
    index: z.number().int().meta({ description: 'Its index in the list' }),
    status: z.string().meta({ description: 'The status as status_size binary digits' }),
    assigned: z.boolean().meta({ description: 'Always true: an entry exists once its credential is issued' }),
    definition_id: z.string(),
    credential_exchange_id: z.string(),
    status_purpose: z.enum(STATUS_PURPOSES),
    indexes: z.array(z.object({ list: z.number().int(), index: z.number().int() })).meta({ description: 'Every credential of the exchange (a batch has one index each); all share the status' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'StatusListEntry' });

const ExchangeParam = z.strictObject({ credential_exchange_id: z.string().min(1).max(128) });
const EntryQuery = z.object({ definition_id: DefId.optional().meta({ description: 'Which definition, when the exchange has entries in several (default: its only one, else its revocation one)' }) });

export const statusListContracts = {
  listStatusListDefs: {
    query: z.object({ status_purpose: z.enum(STATUS_PURPOSES).optional(), supported_cred_id: z.string().min(1).max(128).optional(), ...PAGING_QUERY }),
    paged: true,
    response: z.array(DefinitionView),
    errors: [400, 401, 403],
  },
  createStatusListDef: {
    body: z.strictObject({
      status_purpose: z.enum(STATUS_PURPOSES).optional().meta({ description: 'Default revocation' }),
      status_size: z.union(STATUS_SIZES.map((n: number) => z.literal(n))).optional().meta({ description: 'Bits per status (default 1; above 1 only for message)' }),
      shard_size: z.number().int().min(1).optional().meta({ description: `Entries per shard, from 1 to list_size, at most ${LIMITS.maxShardSize}, at least list_size / ${LIMITS.maxShards} (default ${LIMITS.defaultShardSize})` }),
      list_size: z.number().int().min(LIMITS.minListSize).optional().meta({ description: `A power of two, at least ${LIMITS.minListSize}; list_size × status_size at most ${LIMITS.maxListBits} (default ${LIMITS.defaultListSize})` }),
      status_message: z.array(StatusMessage).max(256).nullish().meta({ description: 'One {status: "0x…", message} per value of a status (2^status_size); required for message' }),
      supported_cred_id: z.string().min(1).max(128).nullish(),
      list_type: z.enum(LIST_TYPES).optional().meta({ description: 'Default: ietf for an SD-JWT supported credential, w3c otherwise' }),
      issuer_did: z.string().min(1).max(1000).optional().meta({ description: "Signs the lists (default: the wallet's public DID)" }),
      verification_method: z.string().min(1).max(1100).optional(),
    }),
    bodyOptional: true,
    response: DefinitionView,
    errors: [400, 401, 403, 409],
  },
  getStatusListDef: { params: z.strictObject({ id: DefId }), response: z.array(DefinitionDetail), errors: [400, 401, 403, 404] },
  deleteStatusListDef: {
    params: z.strictObject({ id: DefId }),
    body: z.strictObject({ recursive_delete: z.boolean().optional() }),
    bodyOptional: true,
    response: z.array(DefinitionView).meta({ description: 'The deleted definition' }),
    errors: [400, 401, 403, 404, 409],
  },
  publishStatusListDef: {
    params: z.strictObject({ def_id: DefId }),
    body: z.strictObject({
      did: z.string().min(1).max(1000).optional().meta({ description: 'Sign with this DID of the wallet from now on' }),
      verification_method: z.string().min(1).max(1100).optional(),
      status_type: z.enum(LIST_TYPES).optional().meta({ description: "Default: the definition's list_type" }),
    }),
    bodyOptional: true,
    response: z.object({ published: z.boolean(), error: z.string(), definition_id: z.string(), status_lists: z.array(z.string()) }).meta({ title: 'PublishResult' }),
    errors: [400, 401, 403, 404],
  },
  getStatusListEntry: { params: ExchangeParam, query: EntryQuery, response: EntryView, errors: [400, 401, 403, 404] },
  revokeStatusListEntry: {
    params: ExchangeParam,
    query: EntryQuery,
    body: z.strictObject({ status: z.string().max(64).optional().meta({ description: 'Binary digits, at most status_size (default 1: revoked, suspended, set)' }) }),
    bodyOptional: true,
    response: EntryView,
    // 409: the entry kept changing under concurrent requests (status_change_conflict).
    errors: [400, 401, 403, 404, 409],
  },
} satisfies OperationContracts;

const ListParams = z.strictObject({
  public_ref: PublicRefPath,
  def_id: DefId,
  list: z.string().regex(/^(0|[1-9][0-9]{0,8})$/).meta({ description: 'The list number' }),
});

/** The IETF draft's historical resolution: not kept here, so asking for it is a 501 (as the draft says). */
const ListQuery = z.object({ time: z.string().max(20).optional().meta({ description: 'Historical lists are not kept: 501' }) });

export const statusListPublicContracts = {
  getIetfStatusList: { params: ListParams, query: ListQuery, mediaTypes: ['application/statuslist+jwt'], response: z.string().meta({ description: 'Status List Token (JWT)' }), conditional: true, errors: [400, 404, 501, 503] },
  getW3cStatusList: { params: ListParams, query: ListQuery, mediaTypes: ['application/vc+jwt'], response: z.string().meta({ description: 'BitstringStatusListCredential secured as a VC-JWT' }), conditional: true, errors: [400, 404, 501, 503] },
} satisfies OperationContracts;
