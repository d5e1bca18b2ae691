import { JsonReply, type OperationImpls } from '../../http/contract';
import { ProtocolError } from '../../http/errors';
import { tenantScope } from '../../store/keys';
import { inSession } from '../../store/session';
import { NotificationRequest, type issuerProtocolContracts } from './contract';
import type { IssuerProtocol } from './service';

/** Public endpoints: the wallet comes from the path, and everything runs in that wallet's session. */
export function issuerProtocolOperations(protocol: IssuerProtocol): OperationImpls<typeof issuerProtocolContracts> {
  const asWallet = async <T>(walletId: string, fn: (scope: ReturnType<typeof tenantScope>) => Promise<T>) => {
    const scope = tenantScope(walletId);
    await protocol.knownWallet(walletId);
    return inSession(scope, () => fn(scope));
  };
  const metadata = ({ params, baseUrl }: { params: { wallet_id: string }; baseUrl: string }) => asWallet(params.wallet_id, (s) => protocol.issuerMetadata(s, baseUrl)) as never;
  const asMetadata = ({ params, baseUrl }: { params: { wallet_id: string }; baseUrl: string }) => asWallet(params.wallet_id, (s) => protocol.authorizationServerMetadata(s, baseUrl)) as never;
  return {
    getCredentialIssuerMetadata: metadata,
    getCredentialIssuerMetadataAppended: metadata,
    getAuthorizationServerMetadata: asMetadata,
    getAuthorizationServerMetadataAppended: asMetadata,
    getCredentialOffer: ({ params }) => asWallet(params.wallet_id, (s) => protocol.offer(s, params.offer_id)) as never,
    token: ({ params, baseUrl, request, body }) => asWallet(params.wallet_id, (s) => protocol.token(s, baseUrl, request, body)) as never,
    nonce: ({ params }) => asWallet(params.wallet_id, async (s) => new JsonReply(await protocol.nonce(s))),
    credential: ({ params, baseUrl, request, body }) => asWallet(params.wallet_id, (s) => protocol.credential(s, baseUrl, request, body)) as never,
    notification: ({ params, baseUrl, request, body }) =>
      asWallet(params.wallet_id, async (s) => {
        const parsed = NotificationRequest.safeParse(body);
        if (!parsed.success) throw new ProtocolError(400, 'invalid_notification_request', parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '));
        await protocol.notification(s, baseUrl, request, parsed.data);
        return new JsonReply(undefined, { status: 204 });
      }),
  };
}
