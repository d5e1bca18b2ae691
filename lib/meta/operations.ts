import type { OperationImpls } from '../http/contract';
import { ALL_CONTRACTS } from '../openapi/all-contracts';
import { buildOpenApiDocument } from '../openapi/document';
import type { metaContracts } from './contract';

export function metaOperations(): OperationImpls<typeof metaContracts> {
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  return {
    getOpenApi: async () => (document ??= buildOpenApiDocument(ALL_CONTRACTS)),
  };
}
