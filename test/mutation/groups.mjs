/**
 * What `npm run mutation` measures (StrykerJS, docs/testing.md): the security-critical modules, each
 * group run on its own against the unit tests that exercise it (fast: no emulators). A range after a
 * file (`file:from-to`) limits mutation to those lines (the functions, not declarations that only the
 * infra tests read). Where code moves often, `span()` finds the lines by the declarations instead.
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
    // proof nonce checks of credential(). The rest of these functions and formats.ts (SD-JWT issuance) are not measured.
    mutate: [
      'lib/oid4vci/protocol/service.ts:276-304',
      'lib/oid4vci/protocol/service.ts:339-354',
      'lib/oid4vci/protocol/service.ts:444-446',
      'lib/oid4vci/protocol/service.ts:462-463',
      'lib/oid4vci/protocol/service.ts:480-490',
      'lib/oid4vci/protocol/service.ts:620-624',
    ],
    tests: ['test/unit/oid4vci-protocol.test.ts', 'test/unit/oid4vci-token-races.test.ts', 'test/unit/oid4vci-issuance.test.ts', 'test/unit/oid4vp-verification.test.ts'],
  },
  {
    name: 'oid4vp',
    what: 'OID4VP verification of an SD-JWT VC: issuer signature, validity, key binding',
    // Narrowed (time) to the signature, validity and key-binding checks: verifySignature, checkValidity,
    // verifySdJwtPresentation's issuer signature and key-binding steps, verifyKeyBinding. Not yet: decodeJwt,
    // the disclosures (reconstructClaims), the status step, lib/oid4vp/verification/jwt-vp.ts.
    mutate: [
      'lib/oid4vp/verification/sd-jwt.ts:70-81',
      'lib/oid4vp/verification/sd-jwt.ts:121-129',
      'lib/oid4vp/verification/sd-jwt.ts:276-310',
      'lib/oid4vp/verification/sd-jwt.ts:334-354',
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
    mutate: ['lib/webhooks/signing.ts', 'lib/webhooks/address-policy.ts', 'lib/webhooks/records.ts:120-124'],
    tests: ['test/unit/webhook-policies.test.ts', 'test/unit/webhook-dispatcher.test.ts'],
  },
  {
    name: 'email',
    what: "email recipient claiming (the lease) and sending",
    mutate: ['lib/email/sender.ts'],
    tests: ['test/unit/email-sender.test.ts'],
  },
];
