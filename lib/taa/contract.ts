import * as z from 'zod';
import type { OperationContracts } from '../http/contract';

/** Schemas of the TAA routes (contract 4.11). */
const TaaView = z
  .object({
    taa_required: z.boolean(),
    taa_record: z.object({ text: z.string(), version: z.string(), digest: z.string() }).nullable(),
    aml_record: z.object({ version: z.string(), aml: z.record(z.string(), z.string()) }).nullable(),
    taa_accepted: z.object({ mechanism: z.string(), time: z.number().int(), version: z.string(), digest: z.string() }).nullable(),
  })
  .meta({ title: 'Taa' });

export const taaContracts = {
  fetchTaa: { response: z.object({ taa: TaaView }), errors: [401, 403] },
  acceptTaa: {
    body: z.strictObject({ mechanism: z.string().min(1).max(200), text: z.string().max(100_000).optional(), version: z.string().max(64).optional() }),
    response: z.object({ taa: TaaView }),
    errors: [400, 401, 403, 409],
  },
} satisfies OperationContracts;
