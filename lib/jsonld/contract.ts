import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PublicRefPath, Timestamp } from '../tenancy/contract';
import { CONTEXT_FILE_ID, CONTEXT_FILE_LIMITS } from './context-files';

/** Schemas of the context-file routes (contract 4.7, docs/jsonld.md). */

const ContextValue = z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.union([z.string(), z.record(z.string(), z.unknown())]))]);

const ContextDocument = z
  .looseObject({ '@context': ContextValue })
  .meta({ title: 'JsonLdContextDocument', description: `A JSON-LD document with a top-level @context; at most ${CONTEXT_FILE_LIMITS.maxBytes} bytes as compact JSON` });

const ContextFileEntry = z
  .object({
    id: z.string().meta({ description: 'The public id: `<public_ref>:<context_file_id>` (GET /context/{id})' }),
    context_file_id: z.string(),
    url: z.string().meta({ description: 'Where JSON-LD processors fetch it (no key)' }),
    created_at: Timestamp,
  })
  .meta({ title: 'ContextFileEntry' });

export const jsonldContracts = {
  createContextFile: {
    body: z.strictObject({
      context_file_id: z.string().regex(CONTEXT_FILE_ID, 'a safe file name: letters, digits, ".", "_", "-", starting with a letter or digit, no "..", at most 128 characters').meta({ description: 'The file name, unique in this wallet (e.g. employee-v1.jsonld)' }),
      file: ContextDocument,
    }),
    response: z
      .object({
        message: z.string(),
        id: z.string().meta({ description: 'The public id (not in the contract)' }),
        context_file_id: z.string(),
        url: z.string().meta({ description: 'The URL credentials name in their @context (not in the contract)' }),
      })
      .meta({ title: 'ContextFileStored' }),
    // 409: another document under this id (context files never change), or the wallet's quota is full. 413: the file is over the bound.
    errors: [400, 401, 403, 409, 413],
  },
} satisfies OperationContracts;

export const jsonldPublicContracts = {
  listContextFiles: {
    query: z.object({ public_ref: PublicRefPath.optional().meta({ description: "Whose files: the wallet's public reference (not in the contract). Without it the list is empty: it never spans wallets" }) }),
    response: z.array(ContextFileEntry),
    errors: [404],
  },
  getContextFile: {
    params: z.strictObject({ id: z.string().max(200).meta({ description: '`<public_ref>:<context_file_id>`' }) }),
    mediaTypes: ['application/ld+json'],
    response: ContextDocument,
    conditional: true,
    errors: [404],
  },
} satisfies OperationContracts;
