import * as z from 'zod';
import type { OperationContracts } from '../http/contract';
import { PAGING_QUERY } from '../http/paging';
import { Timestamp } from '../tenancy/contract';
import { REGISTRY_LIMITS } from './registry';

/** Schemas of the AnonCreds registry routes (not in the contract; docs/anoncreds.md, "Schemas and credential definitions"). */

const AnonCredsSchemaObject = z
  .object({ issuerId: z.string(), name: z.string(), version: z.string(), attrNames: z.array(z.string()) })
  .meta({ title: 'AnonCredsSchema', description: 'The AnonCreds schema object, as resolvers receive it' });

const SchemaRecord = z
  .object({
    schema_id: z.string().meta({ description: 'The AnonCreds id: `<did:web DID>?service=anoncreds&relativeRef=/schema/<resource id>` (did:web AnonCreds method)' }),
    schema: AnonCredsSchemaObject,
    url: z.string().meta({ description: 'Where holders and verifiers fetch it (no key)' }),
    created_at: Timestamp,
  })
  .meta({ title: 'AnonCredsSchemaRecord' });

const CredDefState = z.enum(['wait', 'finished', 'failed']).meta({ description: '`wait`: queued for the worker; `finished`: keys made, published at `url`; `failed`: see error_msg' });

const RevocationRegistryRef = z
  .object({
    revocation_registry_id: z.string().meta({ description: '`<did>?service=anoncreds&relativeRef=/revRegDef/<resource id>`' }),
    url: z.string().meta({ description: 'Where resolvers fetch the registry definition (no key)' }),
    status_list_url: z.string().meta({ description: 'The status list endpoint: `<status_list_url>/<timestamp>` answers the list in force at that Unix time' }),
    tails_location: z.string().meta({ description: 'The tails file (application/octet-stream), the definition\'s `tailsLocation`' }),
    tails_hash: z.string(),
  })
  .meta({ title: 'AnonCredsRevocationRegistryRef' });

const CredDefRecord = z
  .object({
    id: z.string().meta({ description: 'The record id (GET /api/v1/credential-definitions/{id})' }),
    credential_definition_id: z.string().nullable().meta({ description: 'The AnonCreds id (`<did>?service=anoncreds&relativeRef=/credDef/<resource id>`); null until finished, since it is the hash of the keys' }),
    schema_id: z.string(),
    issuer_id: z.string().meta({ description: "The wallet's public did:web DID when the definition was requested" }),
    tag: z.string(),
    support_revocation: z.boolean(),
    revocation_registry_size: z.number().int().nullable().meta({ description: 'L of the revocation registry (revocable definitions): indices 1 … L−1 are issued' }),
    revocation_registry: RevocationRegistryRef.nullable().meta({ description: 'The revocation registry, once a revocable definition is finished' }),
    state: CredDefState,
    error_msg: z.string().nullable(),
    url: z.string().nullable().meta({ description: 'Where holders fetch it once finished (no key)' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ title: 'AnonCredsCredentialDefinitionRecord' });

const CredDefObject = z
  .object({
    issuerId: z.string(),
    schemaId: z.string(),
    type: z.literal('CL'),
    tag: z.string(),
    value: z.object({
      primary: z.object({ n: z.string(), s: z.string(), r: z.record(z.string(), z.string()), rctxt: z.string(), z: z.string() }),
      revocation: z.record(z.string(), z.string()).optional().meta({ description: 'Revocable definitions: the CL_ACCUM public key (g, g_dash, h, h0, h1, h2, htilde, h_cap, u, pk, y; AMCL hex)' }),
    }),
  })
  .meta({ title: 'AnonCredsCredentialDefinition', description: 'The public AnonCreds credential definition (no private part ever leaves the worker unsealed)' });

const KeyCorrectnessProof = z
  .object({ c: z.string(), xz_cap: z.string(), xr_cap: z.array(z.tuple([z.string(), z.string()])) })
  .meta({ title: 'AnonCredsKeyCorrectnessProof', description: 'Public: every credential offer carries it' });

/** An id in a path: the record's own id, a resource id, or a full AnonCreds id (percent-encoded). */
const IdParam = z.string().min(1).max(1200);

export const anoncredsContracts = {
  createSchema: {
    body: z.strictObject({
      schema_name: z.string().max(1024).meta({ description: `1–${REGISTRY_LIMITS.maxNameLength} characters` }),
      schema_version: z.string().max(64).meta({ description: 'Dot-separated numbers, e.g. "1.0"' }),
      attributes: z
        .array(z.string().max(1024))
        .max(1000)
        .meta({ description: `1–${REGISTRY_LIMITS.maxAttributes} names, unique once spaces are removed and case is ignored; not master_secret` }),
    }),
    response: SchemaRecord,
    errors: [400, 401, 403, 409],
  },
  listSchemas: {
    query: z.object(PAGING_QUERY),
    paged: true,
    response: z.array(SchemaRecord),
    errors: [400, 401, 403],
  },
  getSchema: {
    params: z.strictObject({ id: IdParam.meta({ description: 'The schema_id (percent-encoded) or its resource id' }) }),
    response: SchemaRecord,
    errors: [401, 403, 404],
  },
  createCredentialDefinition: {
    body: z.strictObject({
      schema_id: z.string().min(1).max(1200).meta({ description: 'One of this wallet\'s schemas: its schema_id or resource id' }),
      tag: z.string().max(256).default('default').meta({ description: `Unique per schema; 1–${REGISTRY_LIMITS.maxTagLength} letters, digits, ".", "_", "-" (default "default")` }),
      support_revocation: z.boolean().default(false).meta({ description: 'true: the worker also makes the revocation keys, one revocation registry and its tails file, and publishes its status list' }),
      revocation_registry_size: z
        .number()
        .int()
        .optional()
        .meta({ description: `${REGISTRY_LIMITS.minRegistrySize}–${REGISTRY_LIMITS.maxRegistrySize} (default ${REGISTRY_LIMITS.defaultRegistrySize} when revocable); L credentials, indices 1 … L−1 issued`, examples: [100] }),
    }),
    status: 202,
    response: CredDefRecord,
    errors: [400, 401, 403, 404, 409],
  },
  listCredentialDefinitions: {
    query: z.object(PAGING_QUERY),
    paged: true,
    response: z.array(CredDefRecord),
    errors: [400, 401, 403],
  },
  getCredentialDefinition: {
    params: z.strictObject({ id: IdParam.meta({ description: 'The record id, or the credential_definition_id (percent-encoded)' }) }),
    response: CredDefRecord.extend({ credential_definition: CredDefObject.optional(), key_correctness_proof: KeyCorrectnessProof.optional() }).meta({ title: 'AnonCredsCredentialDefinitionDetail' }),
    errors: [401, 403, 404],
  },
} satisfies OperationContracts;

/** The did:web AnonCreds method's resolution result: `{resource, resourceMetadata}`. */
const Resolution = (resource: z.ZodType, title: string) => z.object({ resource, resourceMetadata: z.record(z.string(), z.unknown()) }).meta({ title });

const PublicParams = z.strictObject({
  id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{16,32}$/, 'not a did:web id of this service').meta({ description: 'The did:web DID\'s last segment' }),
  resource_id: z.string().max(64).meta({ description: 'base58(SHA-256(JCS(object)))' }),
});

const RevRegDefObject = z
  .object({
    issuerId: z.string(),
    revocDefType: z.literal('CL_ACCUM'),
    tag: z.string(),
    credDefId: z.string(),
    value: z.object({ maxCredNum: z.number().int(), publicKeys: z.object({ accumKey: z.object({ z: z.string() }) }), tailsHash: z.string(), tailsLocation: z.string() }),
  })
  .meta({ title: 'AnonCredsRevocationRegistryDefinition' });

const StatusListObject = z
  .object({ revRegDefId: z.string(), issuerId: z.string(), revocationList: z.array(z.number().int()), currentAccumulator: z.string(), timestamp: z.number().int() })
  .meta({ title: 'AnonCredsRevocationStatusList', description: 'Issuance by default: 1 marks a revoked index' });

export const anoncredsPublicContracts = {
  getSchemaResource: { params: PublicParams, response: Resolution(AnonCredsSchemaObject, 'AnonCredsSchemaResolution'), conditional: true, errors: [400, 404] },
  getCredentialDefinitionResource: { params: PublicParams, response: Resolution(CredDefObject, 'AnonCredsCredentialDefinitionResolution'), conditional: true, errors: [400, 404] },
  getRevocationRegistryResource: {
    params: PublicParams,
    response: Resolution(RevRegDefObject, 'AnonCredsRevocationRegistryResolution').meta({ description: 'resourceMetadata names the status list endpoint (revocationStatusListEndpoint, and statusListEndpoint as Credo reads it)' }),
    conditional: true,
    errors: [400, 404],
  },
  getRevocationStatusListResource: {
    params: PublicParams.extend({ timestamp: z.coerce.number().int().min(0).max(999_999_999_999).meta({ description: 'Unix time (seconds): the list in force then' }) }),
    response: Resolution(StatusListObject, 'AnonCredsRevocationStatusListResolution').meta({ description: 'resourceMetadata: previousVersionId and nextVersionId, the neighbouring lists\' timestamps ("" when none)' }),
    errors: [400, 404],
  },
  getTailsFile: {
    params: z.strictObject({ id: PublicParams.shape.id, tails_hash: z.string().max(64).meta({ description: 'The registry definition\'s tailsHash' }) }),
    mediaTypes: ['application/octet-stream'],
    response: z.string().meta({ description: 'The tails file: its SHA-256, in base58, is the tails hash' }),
    conditional: true,
    errors: [400, 404],
  },
} satisfies OperationContracts;
