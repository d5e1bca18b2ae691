import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { Timestamp } from '../tenancy/contract';
import { BULK_LIMITS } from './recipients';

/** Schemas of the bulk email routes (contract 4.1). Each entry's content is checked in recipients.ts, so a bad entry fails alone. */

const Entry = z.object({
  email: z.string().max(1000).meta({ description: 'The recipient (spaces trimmed, domain case ignored)' }),
  schema_id: z.string().max(200).meta({ description: 'A supported credential of this wallet: its supported_cred_id or its identifier' }),
  time_to_accept: z.number().meta({ description: `Days the offer stays redeemable (more than a minute, at most ${BULK_LIMITS.maxDaysToAccept})` }),
  attributes: z.array(z.object({ name: z.string().max(500), value: z.string().max(10_000) })).max(200).meta({ description: 'Claims: a name, or a JSON pointer (/address/street) for a nested claim; values read as the claim\'s value_type' }),
});

export const EMAIL_STATES = ['queued', 'sending', 'sent', 'failed'] as const;

const Record_ = z
  .object({
    request_id: z.string(),
    index: z.number().int(),
    email: z.string(),
    state: z.enum(EMAIL_STATES),
    schema_id: z.string(),
    supported_cred_id: z.string().nullable(),
    exchange_id: z.string().nullable(),
    failure_reason: z.string().nullable(),
    failure_details: z.array(z.object({ path: z.string(), message: z.string() })),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'EmailRecipient' });

export const emailContracts = {
  verifyEmails: {
    body: z.strictObject({ emails: z.array(Entry).max(BULK_LIMITS.maxEntries).meta({ description: `At most ${BULK_LIMITS.maxEntries} entries` }) }),
    response: z.object({ emailsSuccess: z.array(z.string()), emailsFailure: z.array(z.string()), invalidEmails: z.array(z.string()) }).meta({ title: 'BulkEmailResult' }),
    errors: [400, 401, 403, 409],
  },
  listEmails: {
    query: z.object({ request_id: z.string().uuid().optional(), state: z.enum(EMAIL_STATES).optional(), ...PAGING_QUERY }),
    paged: true,
    response: z.array(Record_),
    errors: [400, 401, 403],
  },
} satisfies OperationContracts;
