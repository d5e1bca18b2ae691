import * as z from 'zod';
import type { OperationContracts } from '../http/contract';

export const metaContracts = {
  getOpenApi: {
    response: z.looseObject({ openapi: z.string() }).meta({ description: 'An OpenAPI 3.1 document' }),
    errors: [],
  },
} satisfies OperationContracts;
