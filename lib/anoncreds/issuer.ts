// The issuing half of the `anoncreds` format (functions/workers/credential-issuer.ts): the holder's
// request, checked structurally by the inbound worker, is checked here in full — its blinded-secrets
// correctness proof against our offer's nonce — before anything else; then, for a revocable
// definition, a revocation index is allocated once per exchange; then the credential is signed
// (objects.ts createCredential: primary signature, its correctness proof, the non-revocation part).
import { ANONCREDS, type AnonCredsFormatRecord } from '../didcomm/protocols/issue-credential-v2/anoncreds';
import { IssueRefused, type ExchangeToIssue, type Issued } from '../didcomm/protocols/issue-credential-v2/formats';
import type { FormatIssuer } from '../didcomm/protocols/issue-credential-v2/issuing';
import { keys, type TenantScope } from '../store/keys';
import type { ItemKey, ItemStore } from '../store/port';
import { scalarFromString } from './bn254';
import { checkBlindedSecretsCorrectnessProof, ClError } from './cl';
import type { AnonCredsOfferOptions } from './issuance';
import { AnonCredsFormatError, createCredential, parseCredentialRequest, parsePrimaryPublicKey, type CredentialOfferJson, type CredentialRevocationInput } from './objects';
import { registryKeys } from './registry';
import { parseRevocationPublicKey, parseRevocationStatusList, RevocationError } from './revocation';
import { RevocationRegistryFullError, RevocationRegistryStore, revRegKeys } from './revocation-registry';
import { SealedKeyVersionError, type CredDefKeySealer, type SealedItem } from './sealed-keys';

/** The item holding the revocation index of one exchange (allocated once, whatever the retries). */
export const revIndexClaimKey = (s: TenantScope, exchangeId: string): ItemKey => ({ PK: keys.walletPartition(s), SK: `ACRRIDX#${exchangeId}` });

const refuse = (message: string) => new IssueRefused('issuance-abandoned', message);

/** A key sealed by an earlier version abandons the exchange with that reason (retrying cannot help). */
async function opened<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (err) {
    if (err instanceof SealedKeyVersionError) throw refuse(err.message);
    throw err;
  }
}

export class AnonCredsIssuer implements FormatIssuer {
  readonly name = ANONCREDS.name;
  private readonly registries: RevocationRegistryStore;

  constructor(
    private readonly deps: {
      readonly store: ItemStore;
      readonly sealer: CredDefKeySealer;
      readonly now?: () => Date;
    },
  ) {
    this.registries = new RevocationRegistryStore(deps.store, deps.now);
  }

  async issue(scope: TenantScope, x: ExchangeToIssue): Promise<Issued> {
    const { store, sealer } = this.deps;
    const o = x.format_options as Partial<AnonCredsOfferOptions>;
    const offer = x.offer as CredentialOfferJson | null;
    if (!o.definition_id || !Array.isArray(o.values) || !offer || typeof offer.nonce !== 'string') throw refuse('the exchange has no AnonCreds offer to sign');
    const def = await store.get(registryKeys.credDef(scope, o.definition_id), { consistent: true });
    if (!def || def.state !== 'finished' || def.credential_definition_id !== offer.cred_def_id) throw refuse('the credential definition of the offer is gone');
    let request;
    try {
      request = parseCredentialRequest(x.request);
    } catch (err) {
      if (err instanceof AnonCredsFormatError) throw refuse(err.message);
      throw err;
    }
    if (request.cred_def_id !== offer.cred_def_id) throw refuse('the request names another credential definition than the offer');
    const [pub, sealedKey] = await Promise.all([store.get(registryKeys.credDefPublic(scope, def.resource_id as string)), store.get(registryKeys.credDefKey(scope, o.definition_id))]);
    if (!pub || !sealedKey) throw new Error('a finished credential definition lacks its published object or its sealed key');
    const document = JSON.parse(pub.document as string) as { value: { primary: unknown; revocation?: unknown } };
    const publicKey = parsePrimaryPublicKey(document.value.primary);
    const definitionId = o.definition_id;
    const privateKey = await opened(() => sealer.open(scope.walletId, definitionId, sealedKey));
    // The holder's proof first, so a bad request costs no revocation index (createCredential checks it again: some 10 ms).
    try {
      checkBlindedSecretsCorrectnessProof(
        { u: request.blinded_ms.u, hidden_attributes: request.blinded_ms.hidden_attributes, committed_attributes: request.blinded_ms.committed_attributes ?? {} },
        { c: request.blinded_ms_correctness_proof.c, v_dash_cap: request.blinded_ms_correctness_proof.v_dash_cap, m_caps: request.blinded_ms_correctness_proof.m_caps, r_caps: request.blinded_ms_correctness_proof.r_caps ?? {} },
        BigInt(offer.nonce),
        publicKey,
        privateKey,
      );
    } catch (err) {
      if (err instanceof ClError) throw refuse(`the holder's blinded link secret does not verify against this offer: ${err.message}`);
      throw err;
    }
    let revocation: CredentialRevocationInput | undefined;
    if (o.rev_reg_resource_id) {
      if (!request.blinded_ms.ur) throw refuse('the credential is revocable: the request must carry the blinded revocation secret (blinded_ms.ur)');
      revocation = await this.revocation(scope, o as AnonCredsOfferOptions, x.credential_exchange_id, document.value.revocation, sealedKey);
    }
    let credential;
    try {
      credential = createCredential({ publicKey, privateKey, offer, request: x.request, values: Object.fromEntries(o.values), ...(revocation ? { revocation } : {}) });
    } catch (err) {
      if (err instanceof AnonCredsFormatError || err instanceof ClError || err instanceof RevocationError) throw refuse(err.message);
      throw err;
    }
    const record: AnonCredsFormatRecord = { schema_id: offer.schema_id, cred_def_id: offer.cred_def_id, rev_reg_id: revocation ? revocation.revRegId : null, cred_rev_id: revocation ? String(revocation.revIdx) : null };
    return { attachment: credential, record: { ...record } };
  }

  /** The revocation inputs: this exchange's index (allocated once), the registry's keys and its current status list. */
  private async revocation(scope: TenantScope, o: AnonCredsOfferOptions, exchangeId: string, publicJson: unknown, sealedDefinitionKey: SealedItem): Promise<CredentialRevocationInput> {
    const { store, sealer } = this.deps;
    const rid = o.rev_reg_resource_id!;
    let revIdx: number;
    try {
      revIdx = await this.registries.allocateIndexOnce(scope, rid, revIndexClaimKey(scope, exchangeId));
    } catch (err) {
      if (err instanceof RevocationRegistryFullError) throw refuse('the revocation registry filled up before this credential was signed');
      throw err;
    }
    const [reg, sealedGamma] = await Promise.all([this.registries.registry(scope, rid, true), store.get(revRegKeys.gamma(scope, rid), { consistent: true })]);
    if (!reg || !sealedGamma) throw new Error('a revocation registry lacks its item or its sealed private part');
    const privateKey = await opened(() => sealer.openRevocationKey(scope.walletId, o.definition_id, sealedDefinitionKey));
    if (!privateKey) throw new Error('a revocable definition has no sealed revocation key');
    const gammaJson = (await opened(() => sealer.openJson(scope.walletId, rid, 'rev-reg-private', sealedGamma))) as { value: { gamma: string } };
    return {
      revRegId: reg.rev_reg_def_id as string,
      revIdx,
      publicKey: parseRevocationPublicKey(publicJson),
      privateKey,
      gamma: scalarFromString(gammaJson.value.gamma),
      statusList: parseRevocationStatusList(JSON.parse(reg.status_list as string)),
    };
  }
}
