// AnonCreds credentials offered over DIDComm (contract 4.2, `POST /api/v1/credentials`): Issue
// Credential 2.0 with the RFC 0771 `anoncreds/*` formats. Everything the caller sends is checked here
// (the schema and the definition are this wallet's, the attributes are exactly the schema's) before
// anything is stored or sent; the holder's request is checked structurally by the inbound worker and
// signed by the issuing worker (issuer.ts), which checks the holder's proof first.
import { ulid } from '../ids';
import { ANONCREDS } from '../didcomm/protocols/issue-credential-v2/anoncreds';
import { CredentialOffering, type CredentialOfferingDeps } from '../didcomm/protocols/issue-credential-v2/offering';
import type { ExchangeRecord } from '../didcomm/protocols/issue-credential-v2/records';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { keys, type TenantScope } from '../store/keys';
import type { Item } from '../store/port';
import { newNonce, type CredentialOfferJson } from './objects';
import { AnonCredsRegistry, registryKeys } from './registry';
import { RevocationRegistryFullError, RevocationRegistryStore } from './revocation-registry';

/** The longest attribute value we sign (characters): it travels raw in the preview, the credential and the record. */
export const MAX_ATTRIBUTE_VALUE_LENGTH = 4096;
/** Definitions read when only the schema is named: every definition a wallet may keep, and the failed ones beside them. */
const MAX_DEFINITIONS_READ = 1000;

export interface IssueAnonCredsInput {
  readonly schema_id?: string | null | undefined;
  readonly cred_def_id?: string | null | undefined;
  readonly attributes?: readonly { readonly name: string; readonly value: string }[] | null | undefined;
  readonly contact_id?: string | null | undefined;
  readonly invitation_id?: number | null | undefined;
  readonly rule?: string | null | undefined;
  readonly comment?: string | null | undefined;
}

/** What the exchange keeps for the issuing worker (`format_options`). */
export interface AnonCredsOfferOptions {
  readonly definition_id: string;
  readonly schema_id: string;
  readonly cred_def_id: string;
  readonly rev_reg_id: string | null;
  readonly rev_reg_resource_id: string | null;
  /** The raw values, in the schema's attribute order. */
  readonly values: [string, string][];
}

const quote = (names: string[]) => names.map((n) => JSON.stringify(n.slice(0, 64))).join(', ');

export class AnonCredsIssuance {
  private readonly offering: CredentialOffering;
  private readonly registry: AnonCredsRegistry;
  private readonly registries: RevocationRegistryStore;

  constructor(private readonly deps: CredentialOfferingDeps) {
    this.offering = new CredentialOffering(deps);
    this.registry = new AnonCredsRegistry(deps);
    this.registries = new RevocationRegistryStore(deps.store);
  }

  /** Contract 4.2: the offer made (sent, queued, or carried by a new invitation); `[exchange]`, after waiting up to `timeout` seconds. */
  async issue(scope: TenantScope, input: IssueAnonCredsInput, timeoutSeconds: number, baseUrl: string): Promise<ExchangeRecord[]> {
    if (input.rule !== undefined && input.rule !== null) {
      throw new BadRequestError('rule is not supported: the contract gives it no meaning; send the request without it', 'rule_not_supported');
    }
    if (!input.schema_id) throw new BadRequestError('schema_id is required: the AnonCreds schema of the credential (POST /api/v1/schemas)', 'schema_id_required');
    if (!input.attributes) throw new BadRequestError("attributes is required: one {name, value} for each of the schema's attribute names", 'attributes_required');
    if (input.contact_id != null && input.invitation_id != null) throw new BadRequestError('Send contact_id or invitation_id, not both', 'target_ambiguous');
    const schema = await this.registry.schemaItem(scope, input.schema_id);
    if (!schema) throw new NotFoundError('No such schema in this wallet', 'schema_not_found');
    const values = checkAttributes((JSON.parse(schema.document as string) as { attrNames: string[] }).attrNames, input.attributes);
    const def = await this.definition(scope, schema, input.cred_def_id ?? undefined);
    const rid = typeof def.rev_reg_resource_id === 'string' ? def.rev_reg_resource_id : null;
    if (rid) {
      const reg = await this.registries.registry(scope, rid, true);
      if (!reg) throw new Error('a finished revocable definition has no revocation registry');
      if (((reg.issued as number | undefined) ?? 0) >= (reg.max_cred_num as number) - 1) throw new RevocationRegistryFullError(reg.max_cred_num as number);
    }
    const pub = await this.deps.store.get(registryKeys.credDefPublic(scope, def.resource_id as string));
    if (!pub) throw new Error('a finished credential definition has no published object');
    const target = await this.offering.target(scope, input);
    const offer: CredentialOfferJson = {
      schema_id: schema.schema_id as string,
      cred_def_id: def.credential_definition_id as string,
      key_correctness_proof: JSON.parse(pub.key_correctness_proof as string) as CredentialOfferJson['key_correctness_proof'],
      nonce: newNonce(),
    };
    const options: AnonCredsOfferOptions = {
      definition_id: def.id as string,
      schema_id: offer.schema_id,
      cred_def_id: offer.cred_def_id,
      rev_reg_id: rid ? (def.rev_reg_def_id as string) : null,
      rev_reg_resource_id: rid,
      values,
    };
    const made = await this.offering.offer(
      scope,
      target,
      {
        format: ANONCREDS,
        exchangeId: ulid(),
        detail: offer,
        formatOptions: { ...options },
        revocationDefId: options.rev_reg_id,
        comment: input.comment,
        preview: values.map(([name, value]) => ({ name, value })),
      },
      timeoutSeconds,
      baseUrl,
    );
    return [made];
  }

  /**
   * The definition to sign with: the one named (not in the contract), or else the wallet's most
   * recently created finished definition of the schema — ACA-Py's rule when an issuance names only the
   * schema (the latest definition sent for it).
   */
  private async definition(scope: TenantScope, schema: Item, credDefId: string | undefined): Promise<Item> {
    if (credDefId !== undefined) {
      const def = await this.registry.credDefItem(scope, credDefId);
      if (!def) throw new NotFoundError('No such credential definition in this wallet', 'cred_def_not_found');
      if (def.schema_resource_id !== schema.resource_id) throw new BadRequestError('The credential definition is of another schema than schema_id', 'cred_def_schema_mismatch');
      if (def.state !== 'finished') throw new ConflictError(`The credential definition is ${String(def.state)}, not finished: its keys are not made yet (or failed)`, 'cred_def_not_finished');
      return def;
    }
    const defs = await this.deps.store.query(keys.walletPartition(scope), { skBeginsWith: registryKeys.credDefPrefix, descending: true, limit: MAX_DEFINITIONS_READ });
    const ofSchema = defs.filter((d) => d.schema_resource_id === schema.resource_id);
    const finished = ofSchema.find((d) => d.state === 'finished');
    if (finished) return finished;
    if (ofSchema.some((d) => d.state === 'wait')) throw new ConflictError("The schema's credential definition is not finished yet: wait for state finished (GET /api/v1/credential-definitions/{id})", 'cred_def_not_finished');
    throw new NotFoundError('This wallet has no finished credential definition of this schema: create one (POST /api/v1/credential-definitions)', 'cred_def_not_found');
  }
}

/**
 * The attributes must be exactly the schema's names (as written there), each once, values strings of
 * bounded length; returned in the schema's order.
 */
export function checkAttributes(attrNames: readonly string[], attributes: readonly { readonly name: string; readonly value: string }[]): [string, string][] {
  const given = new Map<string, string>();
  const twice: string[] = [];
  for (const a of attributes) {
    if (typeof a?.name !== 'string' || typeof a.value !== 'string') throw new BadRequestError('Each attribute is {name, value}, both strings', 'invalid_attributes');
    if (a.value.length > MAX_ATTRIBUTE_VALUE_LENGTH) throw new BadRequestError(`The value of ${quote([a.name])} is longer than ${MAX_ATTRIBUTE_VALUE_LENGTH} characters`, 'attribute_value_too_long');
    if (given.has(a.name)) twice.push(a.name);
    given.set(a.name, a.value);
  }
  if (twice.length > 0) throw new BadRequestError(`Attributes given more than once: ${quote(twice)}`, 'attributes_mismatch');
  const missing = attrNames.filter((n) => !given.has(n));
  const extra = [...given.keys()].filter((n) => !attrNames.includes(n));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [missing.length ? `missing ${quote(missing)}` : '', extra.length ? `not in the schema ${quote(extra.slice(0, 20))}` : ''].filter(Boolean);
    throw new BadRequestError(`The attributes must be exactly the schema's: ${parts.join('; ')}`, 'attributes_mismatch');
  }
  return attrNames.map((n) => [n, given.get(n)!]);
}
