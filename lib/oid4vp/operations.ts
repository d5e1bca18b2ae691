import { RawRepresentation, walletScope, type OperationImpls } from '../http/contract';
import { NotFoundError } from '../http/errors';
import { listOrPage } from '../http/paging';
import type { TenantScope } from '../store/keys';
import { inSession } from '../store/session';
import type { PublicRefs } from '../tenancy/public-refs';
import type { oid4vpAdminContracts, oid4vpPublicContracts } from './contract';
import type { VerifierProtocol } from './protocol/verifier';
import { presentationView } from './presentations';
import { verifierUrl } from './records';
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

/**
 * Public endpoints: the wallet is the one the path's public reference names (looked up with the
 * function's own role), and everything runs in that wallet's session. A reference that names no wallet
 * (an old sequential id included) is a 404 before any session, like an unknown presentation.
 */
export function oid4vpPublicOperations(protocol: VerifierProtocol, refs: PublicRefs): OperationImpls<typeof oid4vpPublicContracts> {
  const asWallet = async <T>(params: { public_ref: string }, baseUrl: string, fn: (scope: TenantScope, verifier: string) => Promise<T>) => {
    const scope = await refs.resolve(params.public_ref);
    if (!scope) throw new NotFoundError('No such presentation request', 'presentation_request_not_found');
    return inSession(scope, () => fn(scope, verifierUrl(baseUrl, params.public_ref)));
  };
  return {
    getRequestObject: ({ params, query, baseUrl }) =>
      asWallet(params, baseUrl, async (s, verifier) => new RawRepresentation(await protocol.requestObject(s, params.presentation_id, query.profile ?? 'v1', verifier), 'application/oauth-authz-req+jwt', { 'cache-control': 'no-store' })),
    postPresentationResponse: ({ params, body, baseUrl }) => asWallet(params, baseUrl, (s, verifier) => protocol.response(s, params.presentation_id, body, verifier)),
  };
}
