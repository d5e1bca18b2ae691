import * as z from 'zod';
import type { OperationContracts } from '../../http/contract';
import { PublicRefPath } from '../../tenancy/contract';

/**
 * Schemas of the public OID4VCI endpoints. Protocol documents are kept loose (the libraries and the
 * specifications own their shapes); bodies are checked by the protocol code so that a bad one gets the
 * protocol's own error (`invalid_request`, …) rather than the service's {error, code}.
 */
const WalletParam = z.strictObject({ public_ref: PublicRefPath });
const OfferParam = z.strictObject({ public_ref: PublicRefPath, offer_id: z.string().regex(/^[A-Za-z0-9_-]{43}$/) });

/** OAuth 2.0 / OpenID4VCI error response (RFC 6749 §5.2). */
export const OAuthError = z.object({ error: z.string(), error_description: z.string().optional() }).meta({ id: 'OAuthError' });

const IssuerMetadata = z
  .looseObject({ credential_issuer: z.string(), credential_endpoint: z.string(), nonce_endpoint: z.string(), credential_configurations_supported: z.record(z.string(), z.looseObject({ format: z.string() })) })
  .meta({ id: 'CredentialIssuerMetadata', description: 'OpenID4VCI 1.0 §12.2.4' });
const AsMetadata = z.looseObject({ issuer: z.string(), token_endpoint: z.string() }).meta({ id: 'AuthorizationServerMetadata', description: 'RFC 8414' });
const Offer = z.looseObject({ credential_issuer: z.string(), credential_configuration_ids: z.array(z.string()), grants: z.record(z.string(), z.unknown()) }).meta({ id: 'CredentialOfferObject' });
const TokenResponse = z
  .looseObject({ access_token: z.string(), token_type: z.string(), expires_in: z.number().int(), c_nonce: z.string().optional(), c_nonce_expires_in: z.number().int().optional() })
  .meta({ id: 'AccessTokenResponse' });
const NonceResponse = z.object({ c_nonce: z.string(), c_nonce_expires_in: z.number().int() }).meta({ id: 'NonceResponse' });
const CredentialResponse = z
  .looseObject({ credentials: z.array(z.object({ credential: z.string() })).optional(), credential: z.string().optional(), notification_id: z.string().optional() })
  .meta({ id: 'CredentialResponse', description: '1.0: credentials[]; draft 13 and 11 requests (`proof`): credential' });

const oauthErrors = { 400: OAuthError, 401: OAuthError, 413: OAuthError } as const;
const Body = z.record(z.string(), z.unknown());

export const issuerProtocolContracts = {
  // No input to get wrong: any reference that names no issuer is a 404.
  getCredentialIssuerMetadata: { params: WalletParam, response: IssuerMetadata, errors: [404], conditional: true },
  getCredentialIssuerMetadataAppended: { params: WalletParam, response: IssuerMetadata, errors: [404], conditional: true },
  getAuthorizationServerMetadata: { params: WalletParam, response: AsMetadata, errors: [404], conditional: true },
  getAuthorizationServerMetadataAppended: { params: WalletParam, response: AsMetadata, errors: [404], conditional: true },
  getCredentialOffer: { params: OfferParam, response: Offer, errors: [400, 404] },
  token: { params: WalletParam, body: z.record(z.string(), z.string()), response: TokenResponse, errors: [400, 401, 404], errorBodies: oauthErrors },
  nonce: { params: WalletParam, body: Body, bodyOptional: true, response: NonceResponse, errors: [400, 404], errorBodies: { 400: OAuthError, 413: OAuthError } },
  credential: { params: WalletParam, body: Body, response: CredentialResponse, errors: [400, 401, 404], errorBodies: oauthErrors },
  notification: { params: WalletParam, body: Body, response: z.undefined(), status: 204, errors: [400, 401, 404], errorBodies: oauthErrors },
} satisfies OperationContracts;

export const NotificationRequest = z.object({
  notification_id: z.string().min(1).max(200),
  event: z.enum(['credential_accepted', 'credential_deleted', 'credential_failure']),
  // §11.1: human-readable ASCII, no control characters.
  event_description: z.string().max(1000).regex(/^[\x20-\x7e]*$/).optional(),
});
