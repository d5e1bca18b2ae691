/**
 * The route table: the single source of truth for the API's surface. The CDK stack, the local
 * runtime, the OpenAPI document, the group routers and the route tests all read it.
 *
 * auth:
 * - `superadmin`: authorizer runs; only the base key (role super-admin) may call (403 otherwise).
 * - `wallet`: authorizer runs; a wallet credential (API key or subwallet token) is required, and the
 *   wallet the handler acts for comes only from the authorizer's context.
 * - `public`: no authorizer; protected by the protocol's own means or serving public data.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type AuthKind = 'superadmin' | 'wallet' | 'public';
export type RouteGroup = 'tenancy' | 'webhooks' | 'dids' | 'taa' | 'oid4vci' | 'resolver' | 'oid4vci-issuer' | 'status-lists' | 'status-lists-public' | 'email' | 'oid4vp' | 'oid4vp-verifier' | 'didcomm' | 'didcomm-inbound' | 'jsonld' | 'jsonld-public' | 'anoncreds' | 'anoncreds-public' | 'meta';

export interface Route {
  readonly method: HttpMethod;
  /** API Gateway resource path, with `{param}` segments. */
  readonly path: string;
  readonly group: RouteGroup;
  readonly auth: AuthKind;
  /** Unique id: names the operation in the group's router and in the OpenAPI document. */
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** Largest accepted request body in bytes (default {@link DEFAULT_MAX_BODY_BYTES}). */
  readonly maxBodyBytes?: number;
  /** Public documents any web page may read (DID documents): answered with `Access-Control-Allow-Origin: *`. */
  readonly cors?: true;
  /** A public protocol endpoint holder wallets call (its own, higher method limit: api-settings.ts). */
  readonly protocol?: true;
  /**
   * A protocol endpoint whose malformed requests (bad JSON or form, too large, wrong types) are
   * answered in OAuth's shape `{error: <this code>, error_description}` rather than `{error, code}`.
   */
  readonly invalidRequest?: 'invalid_request' | 'invalid_credential_request' | 'invalid_notification_request';
  /** The body is `application/x-www-form-urlencoded` (OAuth token requests), parsed into an object of strings. */
  readonly form?: true;
  /** A body over `maxBodyBytes` is a 400 rather than a 413 (the contract's email endpoint lists 400 for it). */
  readonly tooLargeIsBadRequest?: true;
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

export const ROUTES: readonly Route[] = [
  // Contract 4.6: subwallets and API keys (super-admin, no version segment).
  { method: 'POST', path: '/api/subwallet/create', group: 'tenancy', auth: 'superadmin', operationId: 'createSubwallet', tag: 'Subwallets', summary: 'Create a subwallet (tenant)' },
  { method: 'GET', path: '/api/subwallets', group: 'tenancy', auth: 'superadmin', operationId: 'listSubwallets', tag: 'Subwallets', summary: 'List subwallets' },
  { method: 'GET', path: '/api/subwallets/{wallet_id}', group: 'tenancy', auth: 'superadmin', operationId: 'getSubwallet', tag: 'Subwallets', summary: 'Read one subwallet' },
  { method: 'POST', path: '/api/apikey/create', group: 'tenancy', auth: 'superadmin', operationId: 'createApiKey', tag: 'API keys', summary: 'Create an API key for a subwallet (shown once)' },
  { method: 'POST', path: '/api/apikey/revoke', group: 'tenancy', auth: 'superadmin', operationId: 'revokeApiKey', tag: 'API keys', summary: 'Delete a key by wallet_id+name, or mark it revoked by key_id+wallet_id' },
  // Not in the contract: a wallet's view of itself and of its own keys (docs/tenancy.md, "Subwallets and API keys").
  { method: 'GET', path: '/api/v1/wallet', group: 'tenancy', auth: 'wallet', operationId: 'getOwnWallet', tag: 'Wallet', summary: 'The calling wallet' },
  { method: 'GET', path: '/api/v1/apikeys', group: 'tenancy', auth: 'wallet', operationId: 'listOwnApiKeys', tag: 'Wallet', summary: "List this wallet's API keys (never the secrets)" },
  { method: 'GET', path: '/api/v1/apikeys/{key_id}', group: 'tenancy', auth: 'wallet', operationId: 'getOwnApiKey', tag: 'Wallet', summary: "Read one of this wallet's API keys" },
  { method: 'POST', path: '/api/v1/apikeys/{key_id}/revoke', group: 'tenancy', auth: 'wallet', operationId: 'revokeOwnApiKey', tag: 'Wallet', summary: "Revoke one of this wallet's API keys" },
  // Contract 4.10 and section 6: webhook targets, plus what a tenant needs to trust and debug deliveries (docs/webhooks.md).
  { method: 'GET', path: '/api/v1/settings/webhook-target-urls', group: 'webhooks', auth: 'wallet', operationId: 'getWebhookTargetUrls', tag: 'Webhooks', summary: "This wallet's webhook target URLs" },
  { method: 'PUT', path: '/api/v1/settings/webhook-target-urls', group: 'webhooks', auth: 'wallet', operationId: 'putWebhookTargetUrls', tag: 'Webhooks', summary: 'Replace the webhook target URLs' },
  { method: 'GET', path: '/api/v1/settings/webhook-targets', group: 'webhooks', auth: 'wallet', operationId: 'listWebhookTargets', tag: 'Webhooks', summary: 'Webhook targets with their state (a 410 Gone disables one)' },
  { method: 'POST', path: '/api/v1/settings/webhook-target-urls/ping', group: 'webhooks', auth: 'wallet', operationId: 'pingWebhookTargets', tag: 'Webhooks', summary: 'Send a ping event to every active target now' },
  { method: 'GET', path: '/api/v1/settings/webhook-secret', group: 'webhooks', auth: 'wallet', operationId: 'getWebhookSecret', tag: 'Webhooks', summary: 'The signing secret(s) to verify deliveries with' },
  { method: 'POST', path: '/api/v1/settings/webhook-secret/rotate', group: 'webhooks', auth: 'wallet', operationId: 'rotateWebhookSecret', tag: 'Webhooks', summary: 'Rotate the signing secret; the old one also signs during a grace period' },
  { method: 'GET', path: '/api/v1/webhook-deliveries', group: 'webhooks', auth: 'wallet', operationId: 'listWebhookDeliveries', tag: 'Webhooks', summary: 'Recent webhook deliveries, newest first, with their attempts' },
  { method: 'GET', path: '/api/v1/webhook-deliveries/{delivery_id}', group: 'webhooks', auth: 'wallet', operationId: 'getWebhookDelivery', tag: 'Webhooks', summary: 'One webhook delivery with its attempts' },
  { method: 'POST', path: '/api/v1/webhook-deliveries/{delivery_id}/redeliver', group: 'webhooks', auth: 'wallet', operationId: 'redeliverWebhook', tag: 'Webhooks', summary: 'Deliver the same event to the same URL again' },
  // Contract 4.9 (DIDs) and 4.11 (TAA); the list/get/public-did reads are not in the contract (docs/dids.md).
  { method: 'POST', path: '/api/v1/create-did', group: 'dids', auth: 'wallet', operationId: 'createDid', tag: 'DIDs', summary: 'Create a DID on a new KMS key (default did:sov, Ed25519)' },
  { method: 'POST', path: '/api/v1/did/indy', group: 'dids', auth: 'wallet', operationId: 'createIndyDid', tag: 'DIDs', summary: 'Create a did:indy DID' },
  { method: 'POST', path: '/api/v1/set-public-did', group: 'dids', auth: 'wallet', operationId: 'setPublicDid', tag: 'DIDs', summary: "Make a DID the wallet's public DID (published; needs the TAA accepted)" },
  { method: 'GET', path: '/api/v1/dids', group: 'dids', auth: 'wallet', operationId: 'listDids', tag: 'DIDs', summary: "This wallet's DIDs" },
  { method: 'GET', path: '/api/v1/dids/{did}', group: 'dids', auth: 'wallet', operationId: 'getDid', tag: 'DIDs', summary: 'One DID of this wallet' },
  { method: 'POST', path: '/api/v1/dids/{did}/deactivate', group: 'dids', auth: 'wallet', operationId: 'deactivateDid', tag: 'DIDs', summary: 'Deactivate a DID: it resolves as deactivated and its key is scheduled for deletion' },
  { method: 'GET', path: '/api/v1/public-did', group: 'dids', auth: 'wallet', operationId: 'getPublicDid', tag: 'DIDs', summary: "This wallet's public DID (null if none)" },
  { method: 'POST', path: '/api/v1/fetch-taa', group: 'taa', auth: 'wallet', operationId: 'fetchTaa', tag: 'TAA', summary: 'The publication agreement, its mechanisms and this wallet’s acceptance' },
  { method: 'POST', path: '/api/v1/accept-taa', group: 'taa', auth: 'wallet', operationId: 'acceptTaa', tag: 'TAA', summary: 'Accept the publication agreement', maxBodyBytes: 256 * 1024 },
  // Contract 4.4: OID4VCI supported credentials, exchanges and offers (docs/oid4vci.md).
  { method: 'GET', path: '/api/v1/oid4vci/credentials-supported', group: 'oid4vci', auth: 'wallet', operationId: 'listSupportedCredentials', tag: 'OID4VCI', summary: 'Supported credentials; filters supported_cred_id, format, identifier' },
  { method: 'POST', path: '/api/v1/oid4vci/credentials-supported', group: 'oid4vci', auth: 'wallet', operationId: 'createSupportedCredential', tag: 'OID4VCI', summary: 'Create a supported credential (generic: format_data and vc_additional_data as given)' },
  { method: 'POST', path: '/api/v1/oid4vci/credentials-supported/jwt', group: 'oid4vci', auth: 'wallet', operationId: 'createJwtSupportedCredential', tag: 'OID4VCI', summary: 'Create a jwt_vc_json supported credential' },
  { method: 'POST', path: '/api/v1/oid4vci/credentials-supported/sd-jwt', group: 'oid4vci', auth: 'wallet', operationId: 'createSdJwtSupportedCredential', tag: 'OID4VCI', summary: 'Create an SD-JWT VC supported credential' },
  { method: 'GET', path: '/api/v1/oid4vci/credentials-supported/{supported_cred_id}', group: 'oid4vci', auth: 'wallet', operationId: 'getSupportedCredential', tag: 'OID4VCI', summary: 'One supported credential' },
  { method: 'DELETE', path: '/api/v1/oid4vci/credentials-supported/{supported_cred_id}', group: 'oid4vci', auth: 'wallet', operationId: 'deleteSupportedCredential', tag: 'OID4VCI', summary: 'Delete a supported credential (frees its id)' },
  { method: 'GET', path: '/api/v1/oid4vci/exchanges', group: 'oid4vci', auth: 'wallet', operationId: 'listExchanges', tag: 'OID4VCI', summary: 'Exchanges; filters exchange_id, state, supported_cred_id' },
  { method: 'GET', path: '/api/v1/oid4vci/exchanges/{exchange_id}', group: 'oid4vci', auth: 'wallet', operationId: 'getExchange', tag: 'OID4VCI', summary: 'One exchange' },
  { method: 'DELETE', path: '/api/v1/oid4vci/exchanges/{exchange_id}', group: 'oid4vci', auth: 'wallet', operationId: 'deleteExchange', tag: 'OID4VCI', summary: 'Delete an exchange: its offer and code stop working' },
  { method: 'POST', path: '/api/v1/oid4vci/issue', group: 'oid4vci', auth: 'wallet', operationId: 'issueCredentialOffer', tag: 'OID4VCI', summary: 'Create an exchange and its credential offer (pre-authorized code)' },
  // Contract 4.5: OID4VP presentation definitions, requests and presentations (docs/oid4vp.md).
  { method: 'GET', path: '/api/v1/settings/trusted-issuers', group: 'oid4vp', auth: 'wallet', operationId: 'getTrustedIssuers', tag: 'OID4VP', summary: 'Issuers whose credentials this verifier accepts (besides its own DIDs and issuers a request pins)' },
  { method: 'PUT', path: '/api/v1/settings/trusted-issuers', group: 'oid4vp', auth: 'wallet', operationId: 'putTrustedIssuers', tag: 'OID4VP', summary: 'Replace the trusted issuers (DIDs, https issuer URLs; ["*"]: any issuer)' },
  { method: 'GET', path: '/api/v1/oid4vp/presentation-definitions', group: 'oid4vp', auth: 'wallet', operationId: 'listPresentationDefinitions', tag: 'OID4VP', summary: 'Presentation definitions' },
  { method: 'POST', path: '/api/v1/oid4vp/presentation-definitions', group: 'oid4vp', auth: 'wallet', operationId: 'createPresentationDefinition', tag: 'OID4VP', summary: 'Store a presentation definition (DIF Presentation Exchange v2, validated)' },
  { method: 'GET', path: '/api/v1/oid4vp/presentation-definitions/{pres_def_id}', group: 'oid4vp', auth: 'wallet', operationId: 'getPresentationDefinition', tag: 'OID4VP', summary: 'One presentation definition' },
  { method: 'DELETE', path: '/api/v1/oid4vp/presentation-definitions/{pres_def_id}', group: 'oid4vp', auth: 'wallet', operationId: 'deletePresentationDefinition', tag: 'OID4VP', summary: 'Delete a presentation definition' },
  { method: 'GET', path: '/api/v1/oid4vp/presentations', group: 'oid4vp', auth: 'wallet', operationId: 'listPresentations', tag: 'OID4VP', summary: 'Presentations; filters state, pres_def_id' },
  { method: 'GET', path: '/api/v1/oid4vp/presentations/{presentation_id}', group: 'oid4vp', auth: 'wallet', operationId: 'getPresentation', tag: 'OID4VP', summary: 'One presentation, with what was verified' },
  { method: 'DELETE', path: '/api/v1/oid4vp/presentations/{presentation_id}', group: 'oid4vp', auth: 'wallet', operationId: 'deletePresentation', tag: 'OID4VP', summary: 'Delete a presentation (its request stops working)' },
  { method: 'POST', path: '/api/v1/oid4vp/request', group: 'oid4vp', auth: 'wallet', operationId: 'createPresentationRequest', maxBodyBytes: 256 * 1024, tag: 'OID4VP', summary: 'Create a signed presentation request (from a definition or a DCQL query) and its presentation' },
  // Contract 4.1: bulk credential offers by email (docs/email.md).
  { method: 'POST', path: '/api/v1/emails/verify', group: 'email', auth: 'wallet', operationId: 'verifyEmails', maxBodyBytes: 5 * 1024 * 1024, tooLargeIsBadRequest: true, tag: 'Email', summary: 'Offer credentials to many addresses by email (checked at once, sent in the background)' },
  { method: 'GET', path: '/api/v1/emails', group: 'email', auth: 'wallet', operationId: 'listEmails', tag: 'Email', summary: 'Bulk-email recipients and their outcome; filters request_id, state' },
  // Contract 4.3: status list definitions, entries, revocation and publication (docs/status-lists.md).
  { method: 'GET', path: '/api/v1/status-list/defs', group: 'status-lists', auth: 'wallet', operationId: 'listStatusListDefs', tag: 'Status lists', summary: 'Status list definitions; filters status_purpose, supported_cred_id' },
  { method: 'POST', path: '/api/v1/status-list/defs', group: 'status-lists', auth: 'wallet', operationId: 'createStatusListDef', tag: 'Status lists', summary: 'Create a status list definition (bound to a supported credential: its credentials get entries at issuance)' },
  { method: 'GET', path: '/api/v1/status-list/defs/{id}', group: 'status-lists', auth: 'wallet', operationId: 'getStatusListDef', tag: 'Status lists', summary: 'One definition (an array of one), with its lists\' URLs' },
  { method: 'DELETE', path: '/api/v1/status-list/defs/{id}', group: 'status-lists', auth: 'wallet', operationId: 'deleteStatusListDef', tag: 'Status lists', summary: 'Delete a definition; with recursive_delete also its lists and entries (removed in the background)' },
  { method: 'PUT', path: '/api/v1/status-list/defs/{def_id}/publish', group: 'status-lists', auth: 'wallet', operationId: 'publishStatusListDef', tag: 'Status lists', summary: 'Sign and publish every list of a definition now (lists are also re-published by themselves after each change)' },
  { method: 'GET', path: '/api/v1/status-list/entries/{credential_exchange_id}', group: 'status-lists', auth: 'wallet', operationId: 'getStatusListEntry', tag: 'Status lists', summary: "An exchange's status list entry" },
  { method: 'PATCH', path: '/api/v1/status-list/entries/revoke/{credential_exchange_id}', group: 'status-lists', auth: 'wallet', operationId: 'revokeStatusListEntry', tag: 'Status lists', summary: "Set an exchange's status (default: the purpose's set value 1): revoke, suspend, reinstate, a message" },
  // DIDComm v1 (docs/didcomm.md): invitations (not in the contract), connections (contract 4.12) and basic messages (contract 4.8).
  { method: 'POST', path: '/api/v1/invitations', group: 'didcomm', auth: 'wallet', operationId: 'createInvitation', tag: 'DIDComm', summary: 'Create an Out-of-Band 1.1 invitation (DID Exchange 1.1 and 1.0) any Aries agent can accept' },
  { method: 'GET', path: '/api/v1/invitations', group: 'didcomm', auth: 'wallet', operationId: 'listInvitations', tag: 'DIDComm', summary: "This wallet's invitations" },
  { method: 'GET', path: '/api/v1/invitations/{invitation_id}', group: 'didcomm', auth: 'wallet', operationId: 'getInvitation', tag: 'DIDComm', summary: 'One invitation' },
  { method: 'DELETE', path: '/api/v1/invitations/{invitation_id}', group: 'didcomm', auth: 'wallet', operationId: 'deleteInvitation', tag: 'DIDComm', summary: 'Delete an invitation: it accepts no more connections (those made stay)' },
  { method: 'GET', path: '/api/v1/connections', group: 'didcomm', auth: 'wallet', operationId: 'listConnections', tag: 'DIDComm', summary: 'Connections (contacts), one page; sort-field, sort-direction, page-size, current-page, item-count' },
  { method: 'GET', path: '/api/v1/connections/{id}', group: 'didcomm', auth: 'wallet', operationId: 'getConnection', tag: 'DIDComm', summary: 'One connection (its id is the contact_id)' },
  { method: 'GET', path: '/api/v1/messages', group: 'didcomm', auth: 'wallet', operationId: 'listMessages', tag: 'DIDComm', summary: 'Basic messages sent and received, oldest first' },
  { method: 'POST', path: '/didcomm/{public_ref}', group: 'didcomm-inbound', auth: 'public', operationId: 'postDidcommEnvelope', protocol: true, maxBodyBytes: 256 * 1024, tag: 'DIDComm (public)', summary: 'The DIDComm v1 endpoint of a wallet: an encrypted envelope, stored and queued (202)' },
  { method: 'GET', path: '/api/v1/messages/{id}', group: 'didcomm', auth: 'wallet', operationId: 'getMessage', tag: 'DIDComm', summary: 'One basic message' },
  { method: 'POST', path: '/api/v1/messages', group: 'didcomm', auth: 'wallet', operationId: 'sendMessage', tag: 'DIDComm', summary: 'Send a basic message to a contact, or on the connection an invitation produced; queued, then sent by the outbound worker' },
  { method: 'POST', path: '/api/v1/invitations/receive', group: 'didcomm', auth: 'wallet', operationId: 'receiveInvitation', tag: 'DIDComm', summary: "Accept another agent's Out-of-Band invitation: a connection in state request, and the DID Exchange request sent" },
  // Contract 4.7: JSON-LD context files (docs/jsonld.md). Public reads carry the wallet's public reference in the id (`<public_ref>:<name>`); the contract's `GET /context/` is this resource (API Gateway routes the trailing slash to it).
  { method: 'POST', path: '/api/v1/context', group: 'jsonld', auth: 'wallet', operationId: 'createContextFile', maxBodyBytes: 128 * 1024, tag: 'JSON-LD', summary: 'Store a JSON-LD context file (immutable; published at /context/<public_ref>:<context_file_id>)' },
  // Contract 4.2: JSON-LD credentials over DIDComm Issue Credential 2.0 (ld_proof), their exchanges and records (docs/jsonld.md, "Issuing over DIDComm").
  { method: 'POST', path: '/api/v1/credentials/json-ld', group: 'jsonld', auth: 'wallet', operationId: 'issueJsonLdCredential', maxBodyBytes: 128 * 1024, tag: 'JSON-LD', summary: 'Offer a JSON-LD credential over DIDComm (to a contact, an invitation’s connection, or, with neither, connectionless through a new out-of-band invitation carrying the offer)' },
  { method: 'GET', path: '/api/v1/credentials', group: 'jsonld', auth: 'wallet', operationId: 'listCredentialExchanges', tag: 'JSON-LD', summary: 'Credential exchanges, oldest first, one page (limit, cursor)' },
  { method: 'GET', path: '/api/v1/credentials/{id}', group: 'jsonld', auth: 'wallet', operationId: 'getCredentialExchange', tag: 'JSON-LD', summary: 'One credential exchange' },
  { method: 'GET', path: '/api/v1/credentials/json-ld/{id}', group: 'jsonld', auth: 'wallet', operationId: 'getJsonLdCredential', tag: 'JSON-LD', summary: 'The JSON-LD credential issued in an exchange' },
  { method: 'GET', path: '/api/v1/credential-records/{id}', group: 'jsonld', auth: 'wallet', operationId: 'getCredentialRecord', tag: 'JSON-LD', summary: 'An exchange with its format-specific record (ACA-Py’s {cred_ex_record, ld_proof})' },
  { method: 'GET', path: '/context', group: 'jsonld-public', auth: 'public', operationId: 'listContextFiles', cors: true, tag: 'JSON-LD (public)', summary: "One wallet's context files (query public_ref)" },
  { method: 'GET', path: '/context/{id}', group: 'jsonld-public', auth: 'public', operationId: 'getContextFile', cors: true, tag: 'JSON-LD (public)', summary: 'A context file (application/ld+json, immutable, cacheable)' },
  // Not in the contract: the AnonCreds registry (docs/anoncreds.md, "Schemas and credential definitions"), ACA-Py's field names. Public reads follow the did:web AnonCreds method under the issuer DID's path.
  { method: 'POST', path: '/api/v1/schemas', group: 'anoncreds', auth: 'wallet', operationId: 'createSchema', tag: 'AnonCreds', summary: 'Create an AnonCreds schema under the public did:web DID (published at once)' },
  { method: 'GET', path: '/api/v1/schemas', group: 'anoncreds', auth: 'wallet', operationId: 'listSchemas', tag: 'AnonCreds', summary: "This wallet's schemas (pages of at most 100)" },
  { method: 'GET', path: '/api/v1/schemas/{id}', group: 'anoncreds', auth: 'wallet', operationId: 'getSchema', tag: 'AnonCreds', summary: 'One schema, by schema_id (percent-encoded) or resource id' },
  { method: 'POST', path: '/api/v1/credential-definitions', group: 'anoncreds', auth: 'wallet', operationId: 'createCredentialDefinition', tag: 'AnonCreds', summary: 'Request a credential definition: stored in state wait, its keys made by the anoncreds worker' },
  { method: 'GET', path: '/api/v1/credential-definitions', group: 'anoncreds', auth: 'wallet', operationId: 'listCredentialDefinitions', tag: 'AnonCreds', summary: "This wallet's credential definitions and their states (pages of at most 100)" },
  { method: 'GET', path: '/api/v1/credential-definitions/{id}', group: 'anoncreds', auth: 'wallet', operationId: 'getCredentialDefinition', tag: 'AnonCreds', summary: 'One credential definition; once finished, with its AnonCreds object' },
  // Contract 4.2: revoke an issued AnonCreds credential, optionally notifying its holder (docs/anoncreds.md, "Revoking a credential").
  { method: 'POST', path: '/api/v1/credentials/anoncreds/revoke', group: 'anoncreds', auth: 'wallet', operationId: 'revokeAnonCredsCredential', tag: 'AnonCreds', summary: "Revoke an AnonCreds credential by its exchange (registry and exchange in one transaction); with connection_id, notify the holder (RFC 0721)" },
  // Contract 4.2: AnonCreds credentials over DIDComm Issue Credential 2.0 (RFC 0771 anoncreds/* formats; docs/anoncreds.md, "Issuing credentials"). Exchanges are read through the JSON-LD group's routes (one record shape).
  { method: 'POST', path: '/api/v1/credentials', group: 'anoncreds', auth: 'wallet', operationId: 'issueAnonCredsCredential', tag: 'AnonCreds', summary: 'Offer an AnonCreds credential over DIDComm (to a contact, an invitation’s connection, or a new invitation carrying the offer)' },
  { method: 'GET', path: '/dids/{id}/anoncreds/schema/{resource_id}', group: 'anoncreds-public', auth: 'public', operationId: 'getSchemaResource', protocol: true, cors: true, tag: 'AnonCreds (public)', summary: 'A schema, as the did:web AnonCreds method resolves it ({resource, resourceMetadata})' },
  { method: 'GET', path: '/dids/{id}/anoncreds/credDef/{resource_id}', group: 'anoncreds-public', auth: 'public', operationId: 'getCredentialDefinitionResource', protocol: true, cors: true, tag: 'AnonCreds (public)', summary: 'A credential definition (public part), as the did:web AnonCreds method resolves it' },
  { method: 'GET', path: '/dids/{id}/anoncreds/revRegDef/{resource_id}', group: 'anoncreds-public', auth: 'public', operationId: 'getRevocationRegistryResource', protocol: true, cors: true, tag: 'AnonCreds (public)', summary: 'A revocation registry definition, with its status list endpoint in resourceMetadata' },
  { method: 'GET', path: '/dids/{id}/anoncreds/revStatus/{resource_id}/{timestamp}', group: 'anoncreds-public', auth: 'public', operationId: 'getRevocationStatusListResource', protocol: true, cors: true, tag: 'AnonCreds (public)', summary: 'The revocation status list of a registry in force at a Unix time' },
  { method: 'GET', path: '/dids/{id}/anoncreds/tails/{tails_hash}', group: 'anoncreds-public', auth: 'public', operationId: 'getTailsFile', protocol: true, cors: true, tag: 'AnonCreds (public)', summary: 'A revocation tails file (application/octet-stream), by its hash' },
  // Public: each definition's lists, signed (docs/status-lists.md, "Publication").
  { method: 'GET', path: '/status-lists/{public_ref}/{def_id}/{list}/ietf', group: 'status-lists-public', auth: 'public', operationId: 'getIetfStatusList', protocol: true, cors: true, tag: 'Status lists (public)', summary: 'A status list as an IETF Token Status List (statuslist+jwt)' },
  { method: 'GET', path: '/status-lists/{public_ref}/{def_id}/{list}/w3c', group: 'status-lists-public', auth: 'public', operationId: 'getW3cStatusList', protocol: true, cors: true, tag: 'Status lists (public)', summary: 'A status list as a W3C BitstringStatusListCredential (VC-JWT)' },
  // Public: DID resolution (Universal Resolver style) and did:web documents.
  { method: 'GET', path: '/1.0/identifiers/{did}', group: 'resolver', auth: 'public', operationId: 'resolveDid', cors: true, tag: 'DID resolution', summary: 'Resolve a published DID (and any did:key / did:jwk)' },
  { method: 'GET', path: '/dids/{id}/did.json', group: 'resolver', auth: 'public', operationId: 'getDidWebDocument', cors: true, tag: 'DID resolution', summary: 'The DID document of a published did:web DID' },
  // Public: each wallet's OpenID4VCI credential issuer at /oid4vci/{public_ref} (docs/oid4vci.md, "The issuer wallets talk to").
  // Public URLs name a wallet by its public reference, never by its sequential id (docs/api.md, "Public references").
  { method: 'GET', path: '/.well-known/openid-credential-issuer/oid4vci/{public_ref}', group: 'oid4vci-issuer', auth: 'public', operationId: 'getCredentialIssuerMetadata', protocol: true, cors: true, tag: 'OID4VCI issuer', summary: 'Credential issuer metadata (OpenID4VCI 1.0 well-known location)' },
  { method: 'GET', path: '/oid4vci/{public_ref}/.well-known/openid-credential-issuer', group: 'oid4vci-issuer', auth: 'public', operationId: 'getCredentialIssuerMetadataAppended', protocol: true, cors: true, tag: 'OID4VCI issuer', summary: 'Credential issuer metadata (older appended location)' },
  { method: 'GET', path: '/.well-known/oauth-authorization-server/oid4vci/{public_ref}', group: 'oid4vci-issuer', auth: 'public', operationId: 'getAuthorizationServerMetadata', protocol: true, cors: true, tag: 'OID4VCI issuer', summary: 'OAuth authorization server metadata (RFC 8414)' },
  { method: 'GET', path: '/oid4vci/{public_ref}/.well-known/oauth-authorization-server', group: 'oid4vci-issuer', auth: 'public', operationId: 'getAuthorizationServerMetadataAppended', protocol: true, cors: true, tag: 'OID4VCI issuer', summary: 'OAuth authorization server metadata (appended location)' },
  { method: 'GET', path: '/oid4vci/{public_ref}/offers/{offer_id}', group: 'oid4vci-issuer', auth: 'public', operationId: 'getCredentialOffer', protocol: true, tag: 'OID4VCI issuer', summary: 'A credential offer by reference (credential_offer_uri)' },
  { method: 'POST', path: '/oid4vci/{public_ref}/token', group: 'oid4vci-issuer', auth: 'public', operationId: 'token', protocol: true, invalidRequest: 'invalid_request', form: true, maxBodyBytes: 16 * 1024, tag: 'OID4VCI issuer', summary: 'Token endpoint: pre-authorized code (and tx_code) for an access token' },
  { method: 'POST', path: '/oid4vci/{public_ref}/nonce', group: 'oid4vci-issuer', auth: 'public', operationId: 'nonce', protocol: true, invalidRequest: 'invalid_request', tag: 'OID4VCI issuer', summary: 'Nonce endpoint: a fresh c_nonce for proofs' },
  { method: 'POST', path: '/oid4vci/{public_ref}/credential', group: 'oid4vci-issuer', auth: 'public', operationId: 'credential', protocol: true, invalidRequest: 'invalid_credential_request', tag: 'OID4VCI issuer', summary: 'Credential endpoint: one credential per proof of possession' },
  { method: 'POST', path: '/oid4vci/{public_ref}/notification', group: 'oid4vci-issuer', auth: 'public', operationId: 'notification', protocol: true, invalidRequest: 'invalid_notification_request', maxBodyBytes: 8 * 1024, tag: 'OID4VCI issuer', summary: 'Notification endpoint: accepted, deleted or failed' },
  // Public: each wallet's OpenID4VP verifier at /oid4vp/{public_ref} (docs/oid4vp.md, "What wallets call").
  { method: 'GET', path: '/oid4vp/{public_ref}/request/{presentation_id}', group: 'oid4vp-verifier', auth: 'public', operationId: 'getRequestObject', protocol: true, invalidRequest: 'invalid_request', tag: 'OID4VP verifier', summary: 'The signed request object (request_uri; retrieved once)' },
  { method: 'POST', path: '/oid4vp/{public_ref}/response/{presentation_id}', group: 'oid4vp-verifier', auth: 'public', operationId: 'postPresentationResponse', protocol: true, invalidRequest: 'invalid_request', form: true, maxBodyBytes: 512 * 1024, tag: 'OID4VP verifier', summary: 'Response endpoint (direct_post): the wallet’s vp_token, verified' },
  // Public.
  { method: 'GET', path: '/openapi.json', group: 'meta', auth: 'public', operationId: 'getOpenApi', tag: 'Meta', summary: 'This API as an OpenAPI 3.1 document' },
  { method: 'GET', path: '/docs', group: 'meta', auth: 'public', operationId: 'getDocsPage', tag: 'Meta', summary: 'This API as a readable reference (HTML, rendered from /openapi.json)' },
  { method: 'GET', path: '/docs/{asset}', group: 'meta', auth: 'public', operationId: 'getDocsAsset', tag: 'Meta', summary: 'A script or stylesheet of the API reference page' },
];

export const ROUTE_GROUPS: readonly RouteGroup[] = [...new Set(ROUTES.map((r) => r.group))];

export function routesOf(group: RouteGroup): Route[] {
  return ROUTES.filter((r) => r.group === group);
}

export function routeKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}
