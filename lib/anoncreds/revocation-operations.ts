import { walletScope, type OperationImpls } from '../http/contract';
import type { AnonCredsCredentialRevocation } from './credential-revocation';
import type { anoncredsRevocationContracts } from './revocation-contract';

export function anoncredsRevocationOperations(revocation: AnonCredsCredentialRevocation): OperationImpls<typeof anoncredsRevocationContracts> {
  return {
    revokeAnonCredsCredential: ({ caller, body }) => revocation.revoke(walletScope(caller), body ?? {}),
  };
}
