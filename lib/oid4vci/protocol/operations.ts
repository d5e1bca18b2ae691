import { JsonReply, RawRepresentation, type OperationImpls } from '../../http/contract';
import { ifNoneMatchHits } from '../../http/conditional';
import { NotFoundError, ProtocolError } from '../../http/errors';
import type { TenantScope } from '../../store/keys';
import { inSession } from '../../store/session';
import type { PublicRefs } from '../../tenancy/public-refs';
import { issuerUrl } from '../records';
import { NotificationRequest, type issuerProtocolContracts } from './contract';
import type { IssuerProtocol, MetadataDocument } from './service';

/**
 * Metadata may be stored by wallets and shared caches but is revalidated on each use (`no-cache`), not
 * served stale for a max-age: an offer for a configuration created a moment ago must find it in the
 * metadata. Revalidation is cheap: If-None-Match with the entity tag gets a 304 without a body.
 */
const METADATA_CACHE_CONTROL = 'public, no-cache';

function conditional(headers: Readonly<Record<string, string>>, doc: MetadataDocument): RawRepresentation | JsonReply {
  const validators = { etag: doc.etag, 'cache-control': METADATA_CACHE_CONTROL };
  if (ifNoneMatchHits(headers['if-none-match'], doc.etag)) return new JsonReply(undefined, { status: 304, headers: validators });
  return new RawRepresentation(doc.body, 'application/json; charset=utf-8', validators);
}

/**
 * Public endpoints: the wallet is the one the path's public reference names (looked up with the
 * function's own role), and everything runs in that wallet's session. A reference that names no wallet
 * (an old sequential id included) is a 404 before any session.
 */
export function issuerProtocolOperations(protocol: IssuerProtocol, refs: PublicRefs): OperationImpls<typeof issuerProtocolContracts> {
  type Call = { params: { public_ref: string }; baseUrl: string };
  const asWallet = async <T>({ params, baseUrl }: Call, fn: (scope: TenantScope, issuer: string) => Promise<T>) => {
    const scope = await refs.resolve(params.public_ref);
    if (!scope) throw new NotFoundError('No such credential issuer', 'issuer_not_found');
    return inSession(scope, () => fn(scope, issuerUrl(baseUrl, params.public_ref)));
  };
  type Get = Call & { request: { headers: Readonly<Record<string, string>> } };
  const metadata = (c: Get) => asWallet(c, async (s, issuer) => conditional(c.request.headers, await protocol.issuerMetadataDocument(s, issuer))) as never;
  const asMetadata = (c: Get) => asWallet(c, async (s, issuer) => conditional(c.request.headers, await protocol.authorizationServerMetadataDocument(s, issuer))) as never;
  return {
    getCredentialIssuerMetadata: metadata,
    getCredentialIssuerMetadataAppended: metadata,
    getAuthorizationServerMetadata: asMetadata,
    getAuthorizationServerMetadataAppended: asMetadata,
    getCredentialOffer: (c) => asWallet(c, (s) => protocol.offer(s, c.params.offer_id)) as never,
    token: (c) => asWallet(c, (s, issuer) => protocol.token(s, issuer, c.request, c.body)) as never,
    nonce: (c) => asWallet(c, async (s) => new JsonReply(await protocol.nonce(s))),
    credential: (c) => asWallet(c, (s, issuer) => protocol.credential(s, issuer, c.request, c.body)) as never,
    notification: (c) =>
      asWallet(c, async (s, issuer) => {
        const parsed = NotificationRequest.safeParse(c.body);
        if (!parsed.success) throw new ProtocolError(400, 'invalid_notification_request', parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '));
        await protocol.notification(s, issuer, c.request, parsed.data);
        return new JsonReply(undefined, { status: 204 });
      }),
  };
}
