/**
 * What `npm run mutation` measures (StrykerJS, docs/testing.md): the security-critical modules, each
 * group run on its own against the unit tests that exercise it (fast: no emulators). A range after a
 * file (`file:from-to`) limits mutation to those lines (the functions, not declarations that only the
 * infra tests read). No range is written as fixed line numbers: `span()` finds the lines by the
 * declarations, `lines()` by the text of a first and a last line, as the file reads when a run starts.
 */
import { readFileSync } from 'node:fs';

/**
 * `file:from-to` from the line that starts with `first` to the closing `}` (at column 0) of the
 * declaration that starts with `last`, as the file reads now.
 */
function span(file, first, last) {
  const lines = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').split('\n');
  const from = lines.findIndex((l) => l.startsWith(first));
  const lastStart = lines.findIndex((l) => l.startsWith(last));
  const to = lines.findIndex((l, i) => i > lastStart && l.startsWith('}'));
  if (from < 0 || lastStart < 0 || to < 0) throw new Error(`mutation group: ${file} has no ${first} … ${last}`);
  return `${file}:${from + 1}-${to + 1}`;
}

/**
 * `file:from-to` from the first line that contains `first` to the first line from there on that
 * contains `last` (both as the file reads now): for lines inside a function, where `span()` cannot
 * find a closing brace at column 0. Throws when either text is missing, so a renamed check fails the
 * run instead of mutating other lines.
 */
function lines(file, first, last = first) {
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').split('\n');
  const from = text.findIndex((l) => l.includes(first));
  const to = from < 0 ? -1 : text.findIndex((l, i) => i >= from && l.includes(last));
  if (from < 0 || to < 0) throw new Error(`mutation group: ${file} has no ${first} … ${last}`);
  return `${file}:${from + 1}-${to + 1}`;
}

const VCI = 'lib/oid4vci/protocol/service.ts';
const VP = 'lib/oid4vp/verification/sd-jwt.ts';

export const MUTATION_GROUPS = [
  {
    name: 'access',
    what: 'tenant partition patterns and the access decision (what IAM decides, decided locally)',
    mutate: [span('lib/service/access.ts', 'export function walletPartitionPatterns', 'export function allows')],
    tests: ['test/unit/access-guard.test.ts'],
  },
  {
    name: 'access-guard',
    what: 'the access guard: the partitions a DynamoDB call names, the guard wired into the SDK clients and key manager, its refusal message',
    mutate: ['lib/adapters/access-guard.ts', span('lib/service/access.ts', 'export class AccessDeniedError', 'export class AccessDeniedError')],
    tests: ['test/unit/access-guard.test.ts'],
  },
  {
    name: 'authentication',
    what: 'API key format, MAC and authentication',
    mutate: ['lib/tenancy/api-key-format.ts', 'lib/tenancy/authenticate.ts'],
    tests: ['test/unit/api-key-format.test.ts', 'test/unit/authenticate.test.ts'],
  },
  {
    name: 'oid4vci',
    what: 'OID4VCI token and credential endpoints: code and PIN, access token, proof nonces',
    // Narrowed to the authentication checks (time): the code, state and tx_code checks of token(), countTxCode()
    // (the PIN count), sameSecret; authorize()'s tie of the access token to its exchange; the spent-nonce and
    // proof nonce checks of credential(). DPoP, spending and the prechecks are oid4vci-proofs, authorize() and
    // notification() oid4vci-access, formats.ts is sd-jwt-issuance; the rest of token() and credential() is not measured.
    mutate: [
      lines(VCI, 'if (parsed.grant.grantType !== preAuthorizedCodeGrantIdentifier)', 'const tokenId = `urn:uuid:'),
      lines(VCI, 'private async countTxCode(', 'throw invalid(Oauth2ErrorCodes.InvalidGrant, `Invalid tx_code ('),
      lines(VCI, 'const ex = exItem ? exchangeFromItem(exItem) : null;', 'if (dpopUsed)'),
      lines(VCI, 'if (alsoFound.some(Boolean))', "if (ex.state !== 'redeemed')"),
      lines(VCI, 'const thumbprints = new Set<string>();', 'const exp = nonceExpiry(secrets.nonceKey, nonce);'),
      span(VCI, 'function sameSecret', 'function sameSecret'),
    ],
    tests: ['test/unit/oid4vci-protocol.test.ts', 'test/unit/oid4vci-token-races.test.ts', 'test/unit/oid4vci-issuance.test.ts', 'test/unit/oid4vp-verification.test.ts'],
  },
  {
    name: 'oid4vci-proofs',
    what: 'OID4VCI DPoP freshness and single use, what a spent value answers, the credential request prechecks, proof time and binding method',
    mutate: [
      lines(VCI, 'private spendDpop(', "throw invalid('invalid_nonce', 'The c_nonce was already used"),
      span(VCI, 'function proofJwts', 'function publicOnly'),
    ],
    // status-lists.test.ts: a status-list definition deleted while a credential was being signed (spend's 503).
    tests: ['test/unit/oid4vci-protocol.test.ts', 'test/unit/oid4vci-token-races.test.ts', 'test/unit/status-lists.test.ts'],
  },
  {
    name: 'oid4vci-access',
    what: "OID4VCI access to the credential and notification endpoints: the access token's tie to its exchange, a private DPoP key, the 401 challenge, the configuration a request names, the notification's id and state",
    // authorize() but for the exchange comparison (oid4vci); refusePrivateDpopKey, unauthorized; checkRequestedConfiguration; notification().
    mutate: [
      span(VCI, 'function refusePrivateDpopKey', 'function unauthorized'),
      lines(VCI, 'private async authorize(', 'const [exItem, record, didItem'),
      lines(VCI, 'if (dpopUsed) throw', 'return { ex, scheme, record'),
      lines(VCI, 'private checkRequestedConfiguration(', "if (!formatMatches || !typeMatches) throw invalid('unknown_credential_configuration'"),
      lines(VCI, 'async notification(', "throw invalid('invalid_notification_request', `The exchange is already ${now?.state ?? 'gone'}`);"),
    ],
    tests: ['test/unit/oid4vci-protocol.test.ts', 'test/unit/oid4vci-token-races.test.ts', 'test/unit/oid4vci-issuance.test.ts'],
  },
  {
    name: 'oid4vci-endpoints',
    what: 'OID4VCI token and credential endpoints, the rest: library errors as protocol errors, the token response and the redemption, the credential request read, the denials, the proof nonce expiry, holder keys, status allocation, the credentials and their response, the issuance write',
    // What the other oid4vci groups leave out of token() and credential(), and the library error mapping both use.
    mutate: [
      span('lib/http/errors.ts', 'export function errorDescription', 'export class ProtocolError'),
      span(VCI, 'function challenges', 'async function mapped'),
      span(VCI, 'function requestLike', 'function requestLike'),
      lines(VCI, 'async token(', 'const parsed = await mapped(() => as.parseAccessTokenRequest'),
      lines(VCI, 'const cNonce = mintNonce(secrets.nonceKey, epoch(now) + this.settings.cNonceTtlSeconds);', 'return response as unknown as Record<string, unknown>;'),
      lines(VCI, 'async credential(', "claimedNonces.map((n) => oid4vciKeys.used(scope, 'nonce', n)),"),
      lines(VCI, 'if (!record) await this.deny(', 'const holders: HolderBinding[] = [];'),
      lines(VCI, "if (exp === null) throw invalid('invalid_nonce'", 'return response as Record<string, unknown>;'),
      lines(VCI, 'private async deny(', "throw invalid('credential_request_denied', description);"),
    ],
    tests: ['test/unit/oid4vci-protocol.test.ts', 'test/unit/oid4vci-token-races.test.ts', 'test/unit/oid4vci-issuance.test.ts', 'test/unit/status-lists.test.ts'],
  },
  {
    name: 'oid4vci-metadata',
    what: 'OID4VCI metadata: the issuer and authorization server documents, what a configuration publishes, the per-instance document cache, the offer by reference, the nonce endpoint',
    mutate: [
      'lib/oid4vci/protocol/metadata.ts',
      span(VCI, 'function serialized', 'function serialized'),
      lines(VCI, 'private async walletState(', 'async nonce(scope: TenantScope)'),
      lines(VCI, 'const { nonceKey } = await this.deps.secrets.of(scope.walletId);', 'c_nonce_expires_in: this.settings.cNonceTtlSeconds };'),
      lines(VCI, 'private readonly metadata = memo(', "} as IssuerMetadataResult;"),
    ],
    tests: ['test/unit/oid4vci-metadata.test.ts', 'test/unit/oid4vci-metadata-cache.test.ts', 'test/unit/oid4vci-supported.test.ts', 'test/unit/oid4vci-protocol.test.ts', 'test/unit/oid4vci-issuance.test.ts'],
  },
  {
    name: 'sd-jwt-issuance',
    what: 'SD-JWT VC and jwt_vc_json issuance: the disclosure frame, holder binding, validity, status claims',
    mutate: [span('lib/oid4vci/protocol/formats.ts', 'export function disclosureFrame', 'export function issueCredential')],
    tests: ['test/unit/oid4vci-issuance.test.ts', 'test/unit/oid4vp-verification.test.ts', 'test/unit/oid4vci-protocol.test.ts'],
  },
  {
    name: 'oid4vp',
    what: 'OID4VP verification of an SD-JWT VC: issuer signature, validity, key binding',
    // The signature, validity and key-binding checks: verifySignature, checkValidity, verifySdJwtPresentation's
    // issuer signature and key-binding steps, verifyKeyBinding. The rest of verification is oid4vp-disclosures.
    mutate: [
      span(VP, 'export async function verifySignature', 'export async function verifySignature'),
      span(VP, 'export function checkValidity', 'export function checkValidity'),
      lines(VP, 'const { header, payload } = jwt;', "fail('missing_key_binding'"),
      span(VP, 'async function verifyKeyBinding', 'async function verifyKeyBinding'),
    ],
    tests: ['test/unit/oid4vp-verification.test.ts', 'test/unit/oid4vp-status.test.ts'],
  },
  {
    name: 'oid4vp-disclosures',
    what: "OID4VP verification, the rest of it: JWT decoding, disclosures and the claims rebuilt from them, the status step and the result, the JWT VP path",
    mutate: [
      span(VP, 'function decodeSegment', 'export function decodeJwt'),
      span(VP, 'export async function checkStatus', 'export async function checkStatus'),
      span(VP, 'const hashB64', 'function splitPresentation'),
      // The status step and what a verified credential reports (the _sd_alg lines before it are oid4vp's).
      lines(VP, 'let status: StatusResult | undefined;', '...(status ? { status } : {}),'),
      'lib/oid4vp/verification/jwt-vp.ts',
    ],
    tests: ['test/unit/oid4vp-verification.test.ts', 'test/unit/oid4vp-status.test.ts'],
  },
  {
    name: 'oid4vp-keys',
    what: 'OID4VP issuer keys and trust',
    mutate: ['lib/oid4vp/verification/issuer-keys.ts', 'lib/oid4vp/verification/trust.ts'],
    tests: ['test/unit/oid4vp-issuer-keys.test.ts', 'test/unit/oid4vp-trust.test.ts'],
  },
  {
    name: 'matching',
    what: 'OID4VP matching: DCQL and Presentation Exchange queries against verified credentials, submission location',
    mutate: ['lib/oid4vp/query/match.ts'],
    tests: ['test/unit/oid4vp-query.test.ts', 'test/unit/oid4vp-match.test.ts'],
  },
  {
    name: 'status-lists',
    what: 'status-list allocation and publication',
    mutate: ['lib/status-lists/allocation.ts', 'lib/status-lists/slots.ts', 'lib/status-lists/publication.ts'],
    tests: ['test/unit/status-lists.test.ts', 'test/unit/status-list-permutation.test.ts'],
  },
  {
    name: 'webhooks',
    what: 'webhook signing, secret rotation rule and address policy',
    mutate: ['lib/webhooks/signing.ts', 'lib/webhooks/address-policy.ts', span('lib/webhooks/records.ts', 'export function signingGenerations', 'export function signingGenerations')],
    tests: ['test/unit/webhook-policies.test.ts', 'test/unit/webhook-dispatcher.test.ts'],
  },
  {
    name: 'email',
    what: "email recipient claiming (the lease) and sending",
    mutate: ['lib/email/sender.ts'],
    tests: ['test/unit/email-sender.test.ts'],
  },
];
