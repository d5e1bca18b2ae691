import { anoncredsRecordView } from '../didcomm/protocols/issue-credential-v2/anoncreds';
import { exchangeView } from '../didcomm/protocols/issue-credential-v2/records';
import { walletScope, type OperationImpls } from '../http/contract';
import { Paged } from '../http/paging';
import type { ItemStore } from '../store/port';
import { credentialRecord, DEFAULT_EXCHANGE_PAGE, listExchanges, readExchange } from '../didcomm/protocols/issue-credential-v2/offering';
import { issuedCredential, ldProofRecordView, type JsonLdIssuance } from './issuance';
import type { jsonldIssuanceContracts } from './issuance-contract';

/**
 * The credential routes of contract 4.2 that JSON-LD issuance answers. A module of its own: it brings
 * the signing stack, which the public context-file function (operations.ts) must not bundle.
 */
export function jsonldIssuanceOperations(issuance: JsonLdIssuance, store: ItemStore): OperationImpls<typeof jsonldIssuanceContracts> {
  return {
    issueJsonLdCredential: ({ caller, body, query, baseUrl }) => issuance.issue(walletScope(caller), body ?? {}, query.timeout ?? 0, baseUrl),
    // Always one page (bounded): the first DEFAULT_EXCHANGE_PAGE without limit, the next through the cursor.
    listCredentialExchanges: async ({ caller, query }) => {
      const page = await listExchanges(store, walletScope(caller), { limit: query.limit ?? DEFAULT_EXCHANGE_PAGE, cursor: query.cursor });
      return new Paged(page.items, page.next);
    },
    getCredentialExchange: async ({ caller, params }) => exchangeView(await readExchange(store, walletScope(caller), params.id)),
    getJsonLdCredential: ({ caller, params }) => issuedCredential(store, walletScope(caller), params.id),
    getCredentialRecord: ({ caller, params }) => credentialRecord(store, walletScope(caller), params.id, { ld_proof: ldProofRecordView, anoncreds: anoncredsRecordView }) as never,
  };
}
