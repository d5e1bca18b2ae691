import { RawRepresentation, walletScope, type OperationImpls } from '../http/contract';
import { listOrPage } from '../http/paging';
import { tenantScope } from '../store/keys';
import { inSession } from '../store/session';
import type { KnownWallets } from '../tenancy/known-wallets';
import type { oid4vpAdminContracts, oid4vpPublicContracts } from './contract';
import type { VerifierProtocol } from './protocol/verifier';
import { presentationView } from './presentations';
import type { VerifierService } from './service';

export function oid4vpAdminOperations(service: VerifierService): OperationImpls<typeof oid4vpAdminContracts> {
  return {
    getTrustedIssuers: ({ caller }) => service.getTrustedIssuers(walletScope(caller)),
    putTrustedIssuers: ({ caller, body }) => service.putTrustedIssuers(walletScope(caller), body.issuers),
    listPresentationDefinitions: ({ caller, query }) =>
      listOrPage(
        query,
        () => service.listDefinitions(walletScope(caller)),
        (p) => service.listDefinitionsPage(walletScope(caller), p),
      ),
    createPresentationDefinition: ({ caller, body }) => service.createDefinition(walletScope(caller), body.pres_def),
    getPresentationDefinition: ({ caller, params }) => service.getDefinition(walletScope(caller), params.pres_def_id),
    deletePresentationDefinition: async ({ caller, params }) => {
      await service.deleteDefinition(walletScope(caller), params.pres_def_id);
      return {};
    },
    listPresentations: ({ caller, query }) => {
      const { limit, cursor, ...filters } = query;
      return listOrPage(
        query,
        async () => (await service.listPresentations(walletScope(caller), filters)).map((r) => presentationView(r)),
        async (p) => {
          const page = await service.listPresentationsPage(walletScope(caller), p, filters);
          return { items: page.items.map((r) => presentationView(r)), next: page.next };
        },
      );
    },
    getPresentation: async ({ caller, params }) => presentationView(await service.getPresentation(walletScope(caller), params.presentation_id)),
    deletePresentation: async ({ caller, params }) => {
      await service.deletePresentation(walletScope(caller), params.presentation_id);
      return {};
    },
    createPresentationRequest: ({ caller, body, baseUrl }) => service.createRequest(walletScope(caller), body, baseUrl),
  };
}

/** Public endpoints: the wallet comes from the path, and everything runs in that wallet's session. */
export function oid4vpPublicOperations(protocol: VerifierProtocol, wallets: KnownWallets): OperationImpls<typeof oid4vpPublicContracts> {
  const asWallet = async <T>(walletId: string, fn: (scope: ReturnType<typeof tenantScope>) => Promise<T>) => {
    await wallets.check(walletId);
    const scope = tenantScope(walletId);
    return inSession(scope, () => fn(scope));
  };
  return {
    getRequestObject: ({ params, query, baseUrl }) =>
      asWallet(params.wallet_id, async (s) => new RawRepresentation(await protocol.requestObject(s, params.presentation_id, query.profile ?? 'v1', baseUrl), 'application/oauth-authz-req+jwt', { 'cache-control': 'no-store' })),
    postPresentationResponse: ({ params, body, baseUrl }) => asWallet(params.wallet_id, (s) => protocol.response(s, params.presentation_id, body, baseUrl)),
  };
}
