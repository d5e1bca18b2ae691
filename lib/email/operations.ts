import { walletScope, type OperationImpls } from '../http/contract';
import { BadRequestError } from '../http/errors';
import { listOrPage } from '../http/paging';
import type { BulkEmailService } from './bulk';
import type { emailContracts } from './contract';

export function emailOperations(service: BulkEmailService): OperationImpls<typeof emailContracts> {
  return {
    verifyEmails: ({ caller, body, baseUrl, request }) => {
      const key = request.headers['idempotency-key'];
      if (key !== undefined && (key.length === 0 || key.length > 255)) throw new BadRequestError('Idempotency-Key must be 1 to 255 characters', 'invalid_idempotency_key');
      return service.submit(walletScope(caller), body.emails, baseUrl, key);
    },
    listEmails: async ({ caller, query }) => {
      const { limit, cursor, ...filter } = query;
      return listOrPage(
        query,
        () => service.list(walletScope(caller), filter),
        (p) => service.listPage(walletScope(caller), p, filter),
      );
    },
  };
}
