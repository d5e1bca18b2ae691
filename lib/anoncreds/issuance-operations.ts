import { walletScope, type OperationImpls } from '../http/contract';
import type { AnonCredsIssuance } from './issuance';
import type { anoncredsIssuanceContracts } from './issuance-contract';

export function anoncredsIssuanceOperations(issuance: AnonCredsIssuance): OperationImpls<typeof anoncredsIssuanceContracts> {
  return {
    issueAnonCredsCredential: ({ caller, body, query, baseUrl }) => issuance.issue(walletScope(caller), body ?? {}, query.timeout ?? 0, baseUrl),
  };
}
