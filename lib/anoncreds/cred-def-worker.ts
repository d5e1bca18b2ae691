// The anoncreds worker's job: make one credential definition's keys (cl.ts), seal the private key
// (sealed-keys.ts) and publish the definition — record, public object, sealed key and event in one
// transaction, conditional on the record still waiting, so a redelivered or concurrent job changes
// nothing twice (the loser's keys are dropped unsealed-and-unstored).
import type { EventPublisher } from '../events/publisher';
import type { TenantScope } from '../store/keys';
import { ConditionFailedError, type ItemStore } from '../store/port';
import { newKeyCorrectnessProof, newPrimaryKeys, systemRandomness, type ClRandomness, type KeyCorrectnessProof, type PrimaryPrivateKey, type PrimaryPublicKey } from './cl';
import { anoncredsEndpoint, didWebIdOf, objectId, resourceIdOf } from './identifiers';
import { attrCommonView, keyCorrectnessProofToJson, primaryPublicKeyToJson, type PrimaryPublicKeyJson } from './objects';
import { credDefFromItem, LINK_SECRET_ATTRIBUTE, registryKeys, type CredDefJob } from './registry';
import { newRevocationKeys, revocationPublicKeyToJson, type RevocationPublicKeyJson } from './revocation';
import { buildRevocationRegistry } from './revocation-registry';
import type { CredDefKeySealer } from './sealed-keys';

/** A credential definition's key pair and its key-correctness proof. */
export type KeyGenerator = (attributes: string[]) => Promise<{ publicKey: PrimaryPublicKey; privateKey: PrimaryPrivateKey; proof: KeyCorrectnessProof }>;

/**
 * The generator: anoncreds-rs `create_credential_definition` — the schema's attribute names in their
 * common view (spaces removed, lower case) plus the hidden `master_secret`. `randomness` is a seam for
 * tests (precomputed safe primes); production uses fresh safe primes.
 */
export function clKeyGenerator(randomness: ClRandomness = systemRandomness): KeyGenerator {
  return async (attributes) => {
    const { publicKey, privateKey, metadata } = await newPrimaryKeys(attributes.map(attrCommonView), [LINK_SECRET_ATTRIBUTE], randomness);
    return { publicKey, privateKey, proof: newKeyCorrectnessProof(publicKey, privateKey, metadata, randomness) };
  };
}

/** anoncreds-rs' credential definition object (`revocation` when revocable, in anoncreds-rs' field order). */
export interface AnonCredsCredentialDefinition {
  readonly issuerId: string;
  readonly schemaId: string;
  readonly type: 'CL';
  readonly tag: string;
  readonly value: { readonly primary: PrimaryPublicKeyJson; readonly revocation?: RevocationPublicKeyJson };
}

export type CredDefOutcome = 'finished' | 'failed' | 'already_done' | 'not_found';

export interface CredDefWorkerDeps {
  readonly store: ItemStore;
  readonly events: EventPublisher;
  readonly sealer: CredDefKeySealer;
  readonly generate: KeyGenerator;
  /** Receives of a message before SQS moves it to the DLQ: the last one records the failure. */
  readonly maxReceives: number;
  readonly now?: () => Date;
}

export class CredDefWorker {
  constructor(private readonly deps: CredDefWorkerDeps) {}

  /** Runs in the job's wallet session. Throws to have SQS try again (the last receive marks it failed first). */
  async run(scope: TenantScope, job: CredDefJob, receiveCount: number): Promise<CredDefOutcome> {
    const { store } = this.deps;
    const record = await store.get(registryKeys.credDef(scope, job.definition_id), { consistent: true });
    if (!record) return 'not_found';
    if (record.state !== 'wait') return 'already_done';
    try {
      const schemaItem = await store.get(registryKeys.schema(scope, record.schema_resource_id as string));
      if (!schemaItem) throw new Error('the definition names a schema the wallet does not have');
      const schema = JSON.parse(schemaItem.document as string) as { attrNames: string[] };
      const { publicKey, privateKey, proof } = await this.deps.generate(schema.attrNames);
      const revocable = record.support_revocation === true;
      const revKeys = revocable ? newRevocationKeys() : undefined;
      const definition: AnonCredsCredentialDefinition = {
        issuerId: record.issuer_id as string,
        schemaId: record.schema_id as string,
        type: 'CL',
        tag: record.tag as string,
        value: { primary: primaryPublicKeyToJson(publicKey), ...(revKeys ? { revocation: revocationPublicKeyToJson(revKeys.publicKey) } : {}) },
      };
      const resourceId = resourceIdOf(definition);
      const credDefId = objectId(definition.issuerId, 'credDef', resourceId);
      const sealed = await this.deps.sealer.seal(scope.walletId, job.definition_id, privateKey, revKeys?.privateKey);
      const now = this.deps.now?.() ?? new Date();
      const at = now.toISOString();
      // A revocable definition's registry (tails: 2L + 1 G2 multiplications) is written with it, in the same transaction.
      const registry = revKeys
        ? await buildRevocationRegistry({
            scope,
            sealer: this.deps.sealer,
            definitionId: job.definition_id,
            issuerId: definition.issuerId,
            credDefId,
            publicKey: revKeys.publicKey,
            maxCredNum: record.revocation_registry_size as number,
            endpoint: anoncredsEndpoint(record.base_url as string, didWebIdOf(definition.issuerId)),
            now,
          })
        : undefined;
      const set = {
        state: 'finished',
        credential_definition_id: credDefId,
        resource_id: resourceId,
        ...(registry ? { rev_reg_resource_id: registry.rid, rev_reg_def_id: registry.revRegDefId, tails_hash: registry.definition.value.tailsHash } : {}),
        updated_at: at,
      };
      const finished = { ...record, ...set };
      await store.write([
        {
          type: 'update',
          key: registryKeys.credDef(scope, job.definition_id),
          set,
          condition: { equals: { state: 'wait' } },
        },
        {
          type: 'put',
          condition: 'not_exists',
          item: {
            ...registryKeys.credDefPublic(scope, resourceId),
            type: 'anoncreds_cred_def_public',
            definition_id: job.definition_id,
            credential_definition_id: credDefId,
            issuer_id: definition.issuerId,
            document: JSON.stringify(definition),
            key_correctness_proof: JSON.stringify(keyCorrectnessProofToJson(proof)),
            created_at: at,
          },
        },
        { type: 'put', condition: 'not_exists', item: { ...registryKeys.credDefKey(scope, job.definition_id), type: 'anoncreds_cred_def_key', ...sealed, created_at: at } },
        this.deps.events.stage(scope, 'anoncreds.credential_definition.finished', { ...credDefFromItem(finished, record.base_url as string) }).op,
        ...(registry?.ops ?? []),
      ]);
      return 'finished';
    } catch (err) {
      // Finished by a concurrent delivery of the same job: nothing to do.
      if (err instanceof ConditionFailedError && err.failedIndexes.includes(0)) return 'already_done';
      if (receiveCount < this.deps.maxReceives) throw err;
      await this.#fail(scope, job.definition_id, 'The keys could not be generated or stored; the tag is free again: create the definition anew');
      return 'failed';
    }
  }

  async #fail(scope: TenantScope, id: string, reason: string): Promise<void> {
    const { store } = this.deps;
    const record = await store.get(registryKeys.credDef(scope, id), { consistent: true });
    if (!record || record.state !== 'wait') return;
    const at = (this.deps.now?.() ?? new Date()).toISOString();
    const failed = { ...record, state: 'failed', error_msg: reason, updated_at: at };
    try {
      await store.write([
        { type: 'update', key: registryKeys.credDef(scope, id), set: { state: 'failed', error_msg: reason, updated_at: at }, condition: { equals: { state: 'wait' } } },
        // The tag and the quota place are given back: a failed definition publishes nothing.
        { type: 'delete', key: registryKeys.credDefTag(scope, record.schema_resource_id as string, record.tag as string), condition: { equals: { definition_id: id } } },
        { type: 'update', key: registryKeys.credDefQuota(scope), set: { type: 'quota' }, add: { count: -1 } },
        this.deps.events.stage(scope, 'anoncreds.credential_definition.failed', { ...credDefFromItem(failed, record.base_url as string) }).op,
      ]);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
  }
}
