import type { FunctionName } from './access';

/**
 * Where each function is deployed. CloudFormation holds at most 500 resources per stack, and every
 * function brings its role, policies, log group, alarms, invoke permission and API methods, so the
 * functions are split by area: `api` is the root stack itself (the API, its authorizer and its own
 * description), every other area one nested stack holding its functions and the API methods of their
 * routes. A new function names its area here (the type makes it say one); a new area is a new name in
 * {@link AREAS}. The stack reads nothing else to place a function.
 */
export const AREAS = ['api', 'tenancy', 'identity', 'oid4vci', 'status-lists', 'oid4vp', 'didcomm', 'jsonld', 'anoncreds'] as const;
export type Area = (typeof AREAS)[number];

/** The area deployed in the root stack (with the table, queues, API, WAF and alarm topic). */
export const ROOT_AREA: Area = 'api';

export const FUNCTION_AREAS: Readonly<Record<FunctionName, Area>> = {
  authorizer: 'api',
  meta: 'api',
  // Subwallets and keys, their base key, and the events every area emits: webhooks and their workers.
  tenancy: 'tenancy',
  bootstrap: 'tenancy',
  webhooks: 'tenancy',
  'webhook-relay': 'tenancy',
  'webhook-delivery': 'tenancy',
  // DIDs, the publication agreement and public DID resolution.
  dids: 'identity',
  taa: 'identity',
  resolver: 'identity',
  // Issuance: the admin group, the public issuer, and offers by email.
  oid4vci: 'oid4vci',
  'oid4vci-issuer': 'oid4vci',
  email: 'oid4vci',
  'email-worker': 'oid4vci',
  'status-lists': 'status-lists',
  'status-lists-public': 'status-lists',
  'status-worker': 'status-lists',
  oid4vp: 'oid4vp',
  'oid4vp-verifier': 'oid4vp',
  // DIDComm v1: invitations, connections and basic messages.
  didcomm: 'didcomm',
  'didcomm-inbound': 'didcomm',
  'didcomm-worker': 'didcomm',
  'didcomm-outbound': 'didcomm',
  // JSON-LD: context files (contract 4.7).
  jsonld: 'jsonld',
  'jsonld-public': 'jsonld',
  // AnonCreds registry: schemas, credential definitions, their public objects and the key worker.
  anoncreds: 'anoncreds',
  'anoncreds-public': 'anoncreds',
  'anoncreds-worker': 'anoncreds',
  // JSON-LD credentials over DIDComm: the worker that signs once a holder asked.
  'credential-issuer': 'jsonld',
};
