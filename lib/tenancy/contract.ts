import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { WALLET_ID } from '../store/keys';

/** Request and response schemas of the tenancy routes: they drive validation and the OpenAPI document. */

/** The contract's examples carry wallet ids as numbers and its key endpoints send strings: accept both. */
export const WalletIdInput = z
  .union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.string().regex(WALLET_ID, 'must be a positive integer')])
  .transform((v) => String(v))
  .meta({ description: 'Wallet id: a positive integer, as a JSON number or a decimal string' });

const WalletIdOutput = z.number().int().positive().meta({ description: 'Wallet id (a JSON number)' });

const Name = z.string().trim().min(1).max(100).regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters');

export const Timestamp = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp' });

export const ApiKeyView = z
  .object({
    key_id: z.string(),
    name: z.string().nullable(),
    roles: z.array(z.string()),
    status: z.enum(['active', 'revoked', 'expired']),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
  })
  .meta({ title: 'ApiKey' });

export const Subwallet = z
  .object({
    wallet_id: WalletIdOutput,
    token: z.string().meta({ description: 'Short-lived (1 h) wallet access token, minted on every read; usable in x-api-key' }),
    label: z.string(),
  })
  .meta({ title: 'Subwallet' });

/**
 * A wallet's public reference in a public path. Any string is taken: one that names no wallet (an old
 * sequential id, junk) is answered 404 exactly like an unknown reference, never 400 (lib/tenancy/public-refs.ts).
 */
export const PublicRefPath = z.string().meta({ description: "The wallet's public reference (22 URL-safe characters: `public_ref` of GET /api/v1/wallet); any other value is a 404" });

export const ROLES = ['admin'] as const;

export const tenancyContracts = {
  createSubwallet: {
    body: z.strictObject({
      wallet_name: Name.meta({ description: 'Unique name of the subwallet' }),
      label: z.string().trim().min(1).max(200).optional(),
    }),
    response: z.object({ wallet_id: WalletIdOutput, token: z.string() }),
    errors: [400, 401, 403, 409],
  },
  listSubwallets: {
    query: z.object(PAGING_QUERY),
    paged: true,
    response: z.array(Subwallet),
    errors: [400, 401, 403],
  },
  getSubwallet: {
    params: z.strictObject({ wallet_id: z.string().regex(WALLET_ID, 'must be a positive integer') }),
    response: Subwallet,
    errors: [400, 401, 403, 404],
  },
  createApiKey: {
    body: z.strictObject({
      wallet_id: WalletIdInput,
      roles: z.array(z.enum(ROLES)).min(1).max(ROLES.length * 4),
      name: Name.optional().meta({ description: 'Label unique within the wallet' }),
      expires_at: Timestamp.nullable().optional().meta({ description: 'Must be in the future; omitted or null: never expires' }),
    }),
    response: z.object({
      api_key: z.string().meta({ description: 'The key. Shown only here: the service keeps an HMAC of it' }),
      key_id: z.string(),
      name: z.string().nullable().optional(),
      status: z.string(),
      expires_at: Timestamp.nullable().optional(),
    }),
    errors: [400, 401, 403, 404, 409],
  },
  revokeApiKey: {
    body: z
      .strictObject({
        wallet_id: WalletIdInput,
        name: Name.optional().meta({ description: 'With wallet_id: delete the key of this name' }),
        key_id: z.string().min(1).max(64).optional().meta({ description: 'With wallet_id: mark this key revoked' }),
      })
      .refine((b) => (b.name === undefined) !== (b.key_id === undefined), {
        message: 'give exactly one of name (deletes the key) or key_id (marks it revoked)',
        path: ['name'],
      }),
    response: z.object({ status: z.string() }),
    errors: [400, 401, 403, 404],
  },
  getOwnWallet: {
    response: z.object({
      wallet_id: WalletIdOutput,
      wallet_name: z.string(),
      label: z.string(),
      public_ref: z.string().meta({ description: "Names this wallet in its public URLs (credential issuer, status lists, verifier) instead of wallet_id; not in the contract" }),
      created_at: Timestamp,
    }),
    errors: [401, 403],
  },
  listOwnApiKeys: {
    response: z.array(ApiKeyView),
    errors: [401, 403],
  },
  getOwnApiKey: {
    params: z.strictObject({ key_id: z.string().min(1).max(64) }),
    response: ApiKeyView,
    errors: [401, 403, 404],
  },
  revokeOwnApiKey: {
    params: z.strictObject({ key_id: z.string().min(1).max(64) }),
    response: ApiKeyView,
    errors: [401, 403, 404],
  },
} satisfies OperationContracts;
