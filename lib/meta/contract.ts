import * as z from 'zod';
import type { OperationContracts } from '../http/contract';

export const metaContracts = {
  getOpenApi: {
    response: z.looseObject({ openapi: z.string() }).meta({ description: 'An OpenAPI 3.1 document' }),
    errors: [],
  },
  getDocsPage: {
    mediaTypes: ['text/html'],
    response: z.string().meta({ description: 'An HTML page rendering /openapi.json' }),
    errors: [],
  },
  getDocsAsset: {
    params: z.strictObject({ asset: z.string().max(100).meta({ description: 'A file name the page links to' }) }),
    mediaTypes: ['text/javascript', 'text/css'],
    response: z.string().meta({ description: "A script or stylesheet of the page (the renderer's, or its initializer)" }),
    errors: [404],
  },
} satisfies OperationContracts;
