/**
 * The error catalogue: every `code` the service's error body (`{error, code}`) carries, with what it
 * means, and which operation answers with which. The OpenAPI document lists them per operation and
 * status and restricts each error body's `code` to them, so test/integration/response-schemas.test.ts
 * fails when an operation answers with a code not listed here; test/unit/openapi-docs.test.ts fails
 * when a code here is thrown nowhere. Protocol endpoints' own bodies (OAuth's `{error,
 * error_description}`, DID Resolution) are described by their contracts' `errorBodies` instead.
 */
export const ERROR_CODES = {
  // Any route
  validation_failed: 'A field, parameter or path value has the wrong type, is missing or is unknown; `details` names each one',
  malformed_json: 'The body is not valid JSON',
  bad_request: 'The gateway could not pass the request on (e.g. a malformed %-escape in the path)',
  invalid_cursor: 'The paging cursor was not issued by this list',
  unauthorized: 'Missing, unknown, malformed, revoked or expired API key or subwallet token',
  forbidden: 'The credential is valid but may not call this route (the base key on /api/v1, a wallet key on the super-admin routes)',
  usage_plan_missing: 'The caller has no throttling bucket: an operator must register it',
  payload_too_large: 'The request body is larger than this route accepts',
  throttled: 'The stage, per-tenant or per-route request limit was reached; retry later',
  quota_exceeded: "The caller's request quota was reached; retry later",
  rate_limited: 'Too many requests from this client address (or DID creations by this wallet); retry after Retry-After',
  internal_error: 'An internal error; nothing internal is disclosed',
  // Tenancy
  wallet_name_taken: 'A subwallet with this wallet_name exists',
  wallet_not_found: 'No subwallet with this wallet_id',
  expires_at_in_past: 'expires_at must be in the future',
  api_key_name_taken: 'The wallet already has a key of this name',
  api_key_not_found: 'No such key in this wallet',
  // Webhooks
  not_found: 'No such delivery in this wallet',
  no_webhook_targets: 'The wallet has no active webhook target to ping',
  delivery_in_progress: 'The delivery is still being attempted; redeliver it once it has finished or stalled',
  event_expired: 'The event is older than the 30 days events are kept',
  target_inactive: 'The target URL was removed or disabled; list it again first',
  // DIDs and the publication agreement
  unsupported_key_type: 'This DID method does not support this key type',
  did_not_found: 'No such DID in this wallet',
  did_quota_exceeded: 'The wallet holds as many active DIDs as it may (maxDidsPerWallet); deactivate one first',
  did_deactivated: 'The DID is deactivated',
  did_is_public: "The wallet's public DID cannot be deactivated; make another DID public first",
  did_changed: 'The DID changed while being deactivated, three times; send it again',
  public_did_changed: 'The public DID was changed by other requests meanwhile, three times; send it again',
  issuer_key_disabled: "The DID's key is disabled or pending deletion",
  key_service_unavailable: 'The key service (KMS) is throttling or unavailable; retry',
  key_quota_exceeded: 'The key service refuses more keys (the account quota): an operator must act',
  message_too_large_to_sign: 'An EdDSA signature over more than 4096 bytes was asked for',
  taa_not_accepted: 'Accept the current publication agreement (accept-taa) before making a DID public',
  taa_not_configured: 'This deployment has no publication agreement to accept',
  unknown_mechanism: "The mechanism is not in the agreement's acceptance mechanisms list",
  taa_mismatch: 'text or version is not the current agreement',
  // Issuing from a DID (offers, status lists, presentation requests)
  no_public_did: 'The wallet has no public DID: give `did`, or make one public first',
  unknown_did: 'The DID is not one of this wallet',
  invalid_verification_method: "verification_method is not a signing method of the DID's document",
  // OID4VCI
  identifier_taken: 'The wallet already has a supported credential with this id',
  supported_credential_not_found: 'No such supported credential in this wallet',
  invalid_credential_subject: "credential_subject does not fit the supported credential's claims; `details` names each claim",
  exchange_not_found: 'No such exchange in this wallet',
  issuer_not_found: 'No credential issuer under this public reference',
  offer_not_found: 'No such offer (unknown, or expired and removed)',
  // Status lists
  status_list_definition_not_found: 'No such status list definition in this wallet',
  status_entry_not_found: 'The exchange has no status entry (not issued yet, or its configuration has no status list)',
  status_list_not_found: 'No such status list under this public reference',
  supported_credential_bound: 'The supported credential already has a definition of this kind',
  definition_in_use: 'The definition has assigned entries: delete with recursive_delete',
  status_change_conflict: 'The entry kept changing under concurrent requests; send it again',
  list_type_mismatch: "list_type does not match the supported credential's format",
  status_list_issuer_mismatch: 'The offer is signed by another DID than its status list definition',
  status_list_issuer_fixed: "A definition bound to a supported credential is signed by its credentials' issuer",
  definition_required: 'The exchange has entries in several definitions: give definition_id',
  invalid_status: 'status must be binary digits, at most status_size of them',
  revocation_final: 'A revoked entry cannot be reinstated',
  unsupported_status_type: 'This status type cannot express this definition',
  historical_status_list_unsupported: 'Historical status lists (?time=) are not kept',
  status_list_unavailable: 'The list cannot be signed now and has no valid publication; retry',
  // OID4VP
  invalid_trusted_issuers: 'An entry of issuers is not a DID or https issuer URL, or is repeated; `details` names each',
  invalid_presentation_definition: 'Not a valid Presentation Exchange v2 definition the verifier enforces; `details` names each path',
  untranslatable_presentation_definition: 'The definition has no equivalent DCQL query for OpenID4VP 1.0 wallets',
  invalid_dcql_query: 'Not a DCQL query the verifier can check',
  unsupported_vp_formats: 'vp_formats names no format and algorithm the verifier checks',
  vp_formats_mismatch: "The query asks for a format vp_formats does not allow",
  unresolvable_verifier_did: 'Wallets cannot resolve the verifier DID (did:sov, did:indy or an unpublished did:web)',
  presentation_definition_not_found: 'No such presentation definition in this wallet',
  presentation_not_found: 'No such presentation in this wallet',
  presentation_request_not_found: 'No such presentation request under this public reference',
  // Email
  invalid_idempotency_key: 'Idempotency-Key must be 1 to 255 characters',
  request_too_large: 'The request is too large to keep for repeats: send it in parts',
  idempotency_key_reused: 'This Idempotency-Key was used with another body in the last 24 hours',
  // DIDComm
  invitation_not_found: 'No such invitation in this wallet',
  invitation_changed: 'The invitation changed while it was being deleted; try again',
  connection_not_found: 'No such connection in this wallet',
  page_out_of_range: 'current-page × page-size reaches past the first 1000 connections: list the other way round (sort-direction)',
  message_not_found: 'No such basic message in this wallet',
  endpoint_not_found: 'No DIDComm endpoint under this public reference',
  invalid_envelope: 'Not a DIDComm v1 (RFC 0019) envelope: JSON with protected, iv, ciphertext and tag, naming 1 to 20 recipients',
  unsupported_media_type: 'Send the envelope as application/didcomm-envelope-enc, application/ssi-agent-wire or application/json',
  // DIDComm: sending (POST /api/v1/messages, POST /api/v1/invitations/receive)
  message_required: 'message is missing or empty: the text to send',
  target_required: 'Name the recipient: contact_id or invitation_id',
  target_mismatch: 'contact_id and invitation_id name different connections',
  message_too_large: 'The message is too large to queue for sending',
  contact_not_found: 'No such contact (connection) in this wallet',
  no_connection: 'The invitation has produced no connection yet',
  invitation_ambiguous: 'The (multi-use) invitation produced more than one connection: send with contact_id',
  connection_not_active: 'The connection is not active (its DID Exchange has not completed, or it was abandoned)',
  invitation_required: 'Send exactly one of invitation_url and invitation',
  unsupported_invitation: 'Not an inline Out-of-Band invitation: Connections 1.0 (c_i), connectionless (d_m) and short URLs are not accepted',
  invalid_invitation: "Not a usable Out-of-Band invitation: its shape, handshake protocols, service or endpoint is refused; the message says which",
  // JSON-LD context files
  invalid_context_file_id: 'context_file_id is not a safe file name',
  invalid_context_file: 'file is not a JSON-LD document with a top-level @context',
  context_file_too_large: 'The context file is larger than 64 KiB as compact JSON',
  context_file_exists: 'Another document is stored under this context_file_id; context files never change, use a new id',
  context_file_quota_exceeded: 'The wallet keeps as many context files as it may (500)',
  context_file_not_found: 'No such context file (or no wallet under the reference in its id)',
  unknown_context: 'A context the document names is neither bundled nor one of this wallet\'s context files; contexts are never fetched from the network',
  too_many_contexts: 'The document names more context files than one request resolves (16)',
  invalid_jsonld: 'The document is not valid JSON-LD (an invalid term definition, a protected term redefined, …); the message says what',
  undefined_term: 'A term of the document is defined by none of its contexts (JSON-LD safe mode); the message names it',
  // JSON-LD credentials over DIDComm (POST /api/v1/credentials/json-ld)
  rule_not_supported: 'rule is refused: the contract gives it no meaning (docs/jsonld.md)',
  credential_required: 'credential is missing: the JSON-LD credential to offer',
  credential_too_large: 'The credential is larger than 64 KiB as JSON (or its offer too large to send)',
  revocation_unavailable: 'revocation_def_id cannot be used: no status-list source is wired to JSON-LD issuance in this deployment',
  target_ambiguous: 'Send contact_id or invitation_id, not both',
  issuer_required: "The credential's issuer is missing: one of this wallet's DIDs",
  credential_exchange_not_found: 'No such credential exchange in this wallet',
  credential_not_issued: 'The exchange has not issued its credential yet (see its state)',
  jsonld_safe_mode: 'JSON-LD safe mode refused a value of the document (a relative IRI, an invalid type or language); the message names it',
  // JSON-LD signing (lib/jsonld/signing.ts; answered once a route issues JSON-LD credentials)
  issuer_mismatch: "The credential's issuer is not the DID it would be signed with",
  invalid_credential: 'The credential fails the VC data model checks (types, dates, subject); the message says which',
  unsupported_proof_type: "The proofType (or cryptosuite) is unknown, or the issuing DID's key or document cannot make it; the message says why",
  // /docs
  asset_not_found: 'Not a file of the API reference page',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
type ByStatus = Readonly<Partial<Record<number, readonly ErrorCode[]>>>;

const SIGNING_DID: ErrorCode[] = ['no_public_did', 'unknown_did', 'did_deactivated', 'invalid_verification_method'];
const KEYS_503: ByStatus = { 503: ['key_service_unavailable'] };

/**
 * What each operation answers besides what every operation of its kind does (added by the document:
 * validation, authentication, throttling, 500; see {@link commonErrorCodes}).
 */
export const OPERATION_ERROR_CODES: Readonly<Record<string, ByStatus>> = {
  createSubwallet: { 409: ['wallet_name_taken'] },
  getSubwallet: { 404: ['wallet_not_found'] },
  createApiKey: { 400: ['expires_at_in_past'], 404: ['wallet_not_found'], 409: ['api_key_name_taken'] },
  revokeApiKey: { 404: ['wallet_not_found', 'api_key_not_found'] },
  getOwnApiKey: { 404: ['api_key_not_found'] },
  revokeOwnApiKey: { 404: ['api_key_not_found'] },
  pingWebhookTargets: { 409: ['no_webhook_targets'] },
  getWebhookDelivery: { 404: ['not_found'] },
  redeliverWebhook: { 404: ['not_found'], 409: ['delivery_in_progress', 'event_expired', 'target_inactive'] },
  createDid: { 400: ['unsupported_key_type'], 409: ['did_quota_exceeded'], 429: ['rate_limited'], 500: ['key_quota_exceeded'], ...KEYS_503 },
  createIndyDid: { 409: ['did_quota_exceeded'], 429: ['rate_limited'], 500: ['key_quota_exceeded'], ...KEYS_503 },
  setPublicDid: { 404: ['did_not_found'], 409: ['taa_not_accepted', 'did_deactivated', 'public_did_changed', 'issuer_key_disabled'] },
  getDid: { 404: ['did_not_found'] },
  deactivateDid: { 404: ['did_not_found'], 409: ['did_is_public', 'did_changed'], ...KEYS_503 },
  acceptTaa: { 400: ['unknown_mechanism', 'taa_mismatch'], 409: ['taa_not_configured'] },
  createSupportedCredential: { 409: ['identifier_taken'] },
  createJwtSupportedCredential: { 409: ['identifier_taken'] },
  createSdJwtSupportedCredential: { 409: ['identifier_taken'] },
  getSupportedCredential: { 404: ['supported_credential_not_found'] },
  deleteSupportedCredential: { 404: ['supported_credential_not_found'] },
  getExchange: { 404: ['exchange_not_found'] },
  deleteExchange: { 404: ['exchange_not_found'] },
  issueCredentialOffer: { 400: ['invalid_credential_subject', 'status_list_issuer_mismatch', ...SIGNING_DID], 404: ['supported_credential_not_found'] },
  putTrustedIssuers: { 400: ['invalid_trusted_issuers'] },
  createPresentationDefinition: { 400: ['invalid_presentation_definition'] },
  getPresentationDefinition: { 404: ['presentation_definition_not_found'] },
  deletePresentationDefinition: { 404: ['presentation_definition_not_found'] },
  getPresentation: { 404: ['presentation_not_found'] },
  deletePresentation: { 404: ['presentation_not_found'] },
  createPresentationRequest: {
    400: ['untranslatable_presentation_definition', 'invalid_dcql_query', 'invalid_presentation_definition', 'unsupported_vp_formats', 'vp_formats_mismatch', 'unresolvable_verifier_did', ...SIGNING_DID],
    404: ['presentation_definition_not_found'],
  },
  verifyEmails: { 400: ['invalid_idempotency_key', 'request_too_large', 'payload_too_large'], 409: ['idempotency_key_reused'] },
  createStatusListDef: { 400: ['list_type_mismatch', ...SIGNING_DID], 409: ['supported_credential_bound'] },
  getStatusListDef: { 404: ['status_list_definition_not_found'] },
  deleteStatusListDef: { 404: ['status_list_definition_not_found'], 409: ['definition_in_use'] },
  publishStatusListDef: { 400: ['unsupported_status_type', 'status_list_issuer_fixed', ...SIGNING_DID], 404: ['status_list_definition_not_found'] },
  getStatusListEntry: { 400: ['definition_required'], 404: ['exchange_not_found', 'status_entry_not_found'] },
  revokeStatusListEntry: { 400: ['invalid_status', 'revocation_final', 'definition_required'], 404: ['exchange_not_found', 'status_entry_not_found'], 409: ['status_change_conflict'] },
  getIetfStatusList: { 404: ['status_list_not_found'], 501: ['historical_status_list_unsupported'], 503: ['status_list_unavailable'] },
  getW3cStatusList: { 404: ['status_list_not_found'], 501: ['historical_status_list_unsupported'], 503: ['status_list_unavailable'] },
  getCredentialIssuerMetadata: { 404: ['issuer_not_found'] },
  getCredentialIssuerMetadataAppended: { 404: ['issuer_not_found'] },
  getAuthorizationServerMetadata: { 404: ['issuer_not_found'] },
  getAuthorizationServerMetadataAppended: { 404: ['issuer_not_found'] },
  getCredentialOffer: { 404: ['issuer_not_found', 'offer_not_found'] },
  token: { 404: ['issuer_not_found'] },
  nonce: { 404: ['issuer_not_found'] },
  credential: { 404: ['issuer_not_found'] },
  notification: { 404: ['issuer_not_found'] },
  getRequestObject: { 404: ['presentation_request_not_found'] },
  postPresentationResponse: { 404: ['presentation_request_not_found'] },
  getDocsAsset: { 404: ['asset_not_found'] },
  getInvitation: { 404: ['invitation_not_found'] },
  deleteInvitation: { 404: ['invitation_not_found'], 409: ['invitation_changed'] },
  listConnections: { 400: ['page_out_of_range'] },
  getConnection: { 404: ['connection_not_found'] },
  getMessage: { 404: ['message_not_found'] },
  postDidcommEnvelope: { 400: ['invalid_envelope'], 404: ['endpoint_not_found'], 415: ['unsupported_media_type'] },
  sendMessage: { 400: ['message_required', 'target_required', 'target_mismatch', 'message_too_large'], 404: ['contact_not_found', 'invitation_not_found'], 409: ['no_connection', 'invitation_ambiguous', 'connection_not_active'] },
  createContextFile: { 400: ['invalid_context_file_id', 'invalid_context_file', 'unknown_context', 'too_many_contexts', 'invalid_jsonld'], 409: ['context_file_exists', 'context_file_quota_exceeded'], 413: ['context_file_too_large'] },
  listContextFiles: { 404: ['wallet_not_found'] },
  issueJsonLdCredential: {
    400: ['rule_not_supported', 'credential_required', 'credential_too_large', 'revocation_unavailable', 'target_ambiguous', 'issuer_required', 'unknown_did', 'did_deactivated', 'issuer_mismatch', 'invalid_credential', 'unknown_context', 'too_many_contexts', 'invalid_jsonld', 'undefined_term', 'jsonld_safe_mode', 'unsupported_proof_type'],
    404: ['contact_not_found', 'invitation_not_found'],
    409: ['connection_not_active', 'invitation_ambiguous'],
  },
  getCredentialExchange: { 404: ['credential_exchange_not_found'] },
  getJsonLdCredential: { 404: ['credential_exchange_not_found'], 409: ['credential_not_issued'] },
  getCredentialRecord: { 404: ['credential_exchange_not_found'] },
  getContextFile: { 404: ['context_file_not_found'] },
  receiveInvitation: { 400: ['invitation_required', 'unsupported_invitation', 'invalid_invitation'], ...KEYS_503 },
};

/** What the operation's kind answers with, whatever it does: the same rules that decide its statuses. */
export function commonErrorCodes(op: { readonly auth: string; readonly body: boolean; readonly form: boolean; readonly params: boolean; readonly paged: boolean }): ByStatus {
  const s400: ErrorCode[] = [];
  if (op.body || op.params) s400.push('validation_failed');
  if (op.body && !op.form) s400.push('malformed_json');
  if (op.params || op.paged) s400.push('bad_request');
  if (op.paged) s400.push('invalid_cursor');
  const authenticated = op.auth !== 'public';
  return {
    ...(s400.length ? { 400: s400 } : {}),
    ...(authenticated ? { 401: ['unauthorized'], 403: ['forbidden', 'usage_plan_missing'] } : {}),
    413: ['payload_too_large'],
    429: authenticated ? ['throttled', 'quota_exceeded', 'rate_limited'] : ['throttled', 'rate_limited'],
    500: ['internal_error'],
  };
}
