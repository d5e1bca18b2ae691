import { walletScope, type OperationImpls } from '../http/contract';
import type { taaContracts } from './contract';
import type { TaaService } from './service';

export function taaOperations(taa: TaaService): OperationImpls<typeof taaContracts> {
  return {
    fetchTaa: ({ caller }) => taa.fetch(walletScope(caller)),
    acceptTaa: ({ caller, body }) => taa.accept(walletScope(caller), body),
  };
}
