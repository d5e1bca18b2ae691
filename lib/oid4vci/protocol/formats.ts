import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SDJwtInstance } from '@sd-jwt/core';
import type { DisclosureFrame } from '@sd-jwt/types';
import { sdJwtSigner, signCompactJws, type IssuerSigner } from '../../keys/signer';
import type { TenantScope } from '../../store/keys';
import type { WriteOp } from '../../store/port';
import type { IssuableConfiguration } from '../records';
import { parsePointer } from '../supported';

/** The holder key a proof proved possession of: its JWK, and its DID when the proof named one. */
export interface HolderBinding {
  readonly jwk: Record<string, unknown>;
  readonly did?: string;
  /** The DID URL the proof named (`kid`), when it named one. */
  readonly didUrl?: string;
}

/**
 * The seam where status lists add each credential's status entries at issuance (lib/status-lists/allocation.ts):
 * SD-JWT VC gets `status`, jwt_vc_json gets `vc.credentialStatus`.
 */
export interface StatusEntrySource {
  /**
   * Entries for the `count` credentials of one request of an exchange (each its own index), issued by
   * `issuerDid`. Throws {@link StatusIssuerMismatchError} when a list they would point to is signed by
   * another DID than the credential's issuer where verifiers need them to be one.
   */
  allocate(scope: TenantScope, config: IssuableConfiguration, exchangeId: string, count: number, issuerDid: string): Promise<StatusAllocation>;
  /** The reason credentials of `config` issued by `issuerDid` could not be given entries, or null. */
  issuerConflict(scope: TenantScope, config: IssuableConfiguration, issuerDid: string): Promise<string | null>;
}

/** An SD-JWT VC's status list must be signed by the credential's issuer: verifiers check it with that key. */
export class StatusIssuerMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StatusIssuerMismatchError';
  }
}

/** A definition was deleted (and cleaned up) while a credential for it was being issued: the request may be sent again. */
export class StatusDefinitionGoneError extends Error {
  constructor(readonly definitionId: string) {
    super(`status list definition ${definitionId} was deleted during issuance`);
    this.name = 'StatusDefinitionGoneError';
  }
}

export interface StatusAllocation {
  /** Per credential, what it carries (null: no definition is bound to the configuration). */
  readonly claims: readonly (CredentialStatusClaims | null)[];
  /** The entry records, their definitions' existence checks and events: written in the issuing transaction. */
  readonly ops: readonly WriteOp[];
}

export interface CredentialStatusClaims {
  /** SD-JWT VC `status` claim (IETF Token Status List: `{status_list: {idx, uri}}`). */
  readonly sdJwt?: Record<string, unknown>;
  /** VC `credentialStatus`: a W3C BitstringStatusListEntry, or several (one per definition). */
  readonly w3c?: Record<string, unknown> | readonly Record<string, unknown>[];
}

export interface IssueInput {
  readonly config: IssuableConfiguration;
  readonly subject: Record<string, unknown>;
  /** The issuer's DID: `iss`. The signer's `kid` is the verification method (a DID URL of it). */
  readonly issuerDid: string;
  readonly signer: IssuerSigner;
  readonly holder: HolderBinding;
  readonly now: Date;
  readonly validitySeconds: number;
  readonly status: CredentialStatusClaims | null;
}

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * RFC 6901 pointers of the `sd_list` turned into an `@sd-jwt` disclosure frame: `/address/street`
 * makes `street` disclosable inside `address`. A pointer into an array marks that element.
 */
export function disclosureFrame(sdList: readonly string[], subject: Record<string, unknown>): DisclosureFrame<Record<string, unknown>> {
  const frame: Record<string, unknown> = {};
  for (const pointer of sdList) {
    const segments = parsePointer(pointer) ?? [];
    let node: Record<string, unknown> = frame;
    let value: unknown = subject;
    segments.forEach((seg, i) => {
      const container = value;
      const isArray = Array.isArray(container);
      const key: string | number = isArray ? Number(seg) : seg;
      value = container !== null && typeof container === 'object' ? (container as Record<string, unknown>)[seg] : undefined;
      if (i === segments.length - 1) {
        const sd = ((node._sd as (string | number)[] | undefined) ?? []);
        if (!sd.includes(key)) sd.push(key);
        node._sd = sd;
      } else {
        node[seg] = (node[seg] as Record<string, unknown> | undefined) ?? {};
        node = node[seg] as Record<string, unknown>;
      }
    });
  }
  return frame as DisclosureFrame<Record<string, unknown>>;
}

/** Only the pointers whose claim is present in this subject (optional claims may be left out). */
function presentPointers(sdList: readonly string[], subject: Record<string, unknown>): string[] {
  return sdList.filter((pointer) => {
    let value: unknown = subject;
    for (const seg of parsePointer(pointer) ?? []) {
      if (value === null || typeof value !== 'object' || !(seg in (value as object))) return false;
      value = (value as Record<string, unknown>)[seg];
    }
    return true;
  });
}

const sha256 = (data: string | ArrayBuffer) => new Uint8Array(createHash('sha256').update(typeof data === 'string' ? data : Buffer.from(data)).digest());

/** SD-JWT VC (draft-ietf-oauth-sd-jwt-vc): `typ` from the format, `cnf.jwk` binding, the `sd_list` claims disclosable. */
export async function issueSdJwtVc(input: IssueInput): Promise<string> {
  const { config, subject, signer, now } = input;
  const sdjwt = new SDJwtInstance<Record<string, unknown>>({
    signer: sdJwtSigner(signer),
    signAlg: signer.alg,
    hasher: sha256,
    hashAlg: 'sha-256',
    saltGenerator: () => randomBytes(16).toString('base64url'),
  });
  const iat = epoch(now);
  const payload: Record<string, unknown> = {
    ...subject,
    iss: input.issuerDid,
    iat,
    nbf: iat,
    exp: iat + input.validitySeconds,
    vct: config.vct,
    // A holder that proved with a DID key is bound by that DID URL (RFC 7800 `kid`): wallets such as
    // Credo look the key up by the binding they proved with, and refuse a `jwk` they did not send.
    cnf: input.holder.didUrl ? { kid: input.holder.didUrl } : { jwk: input.holder.jwk },
    ...(input.status?.sdJwt ? { status: input.status.sdJwt } : {}),
  };
  const frame = disclosureFrame(presentPointers(config.sdList, subject), subject);
  return sdjwt.issue(payload, frame, { header: { typ: config.format, kid: signer.kid } });
}

/** VC-JWT (VCDM 1.1 JWT encoding, OpenID4VCI Appendix A.1.1): `vc` from the configuration, holder DID as subject id. */
export async function issueJwtVcJson(input: IssueInput): Promise<string> {
  const { config, subject, signer, now, holder } = input;
  const iat = epoch(now);
  const id = `urn:uuid:${randomUUID()}`;
  const exp = iat + input.validitySeconds;
  const context = config.context && config.context.length > 0 ? config.context : ['https://www.w3.org/2018/credentials/v1'];
  // VCDM 2.0 renamed the validity dates; verifiers (Credo) require them to equal nbf / exp to the second.
  const v2 = context[0] === 'https://www.w3.org/ns/credentials/v2';
  const vc: Record<string, unknown> = {
    '@context': context,
    type: config.types && config.types.length > 0 ? config.types : ['VerifiableCredential'],
    id,
    issuer: input.issuerDid,
    [v2 ? 'validFrom' : 'issuanceDate']: new Date(iat * 1000).toISOString(),
    [v2 ? 'validUntil' : 'expirationDate']: new Date(exp * 1000).toISOString(),
    // The proven holder DID wins over any `id` in the offer's subject: `sub` must equal it.
    credentialSubject: { ...subject, ...(holder.did ? { id: holder.did } : {}) },
    ...(input.status?.w3c ? { credentialStatus: input.status.w3c } : {}),
  };
  // `sub` must equal `credentialSubject.id` when there is one (VC-JWT; Credo checks): the holder DID,
  // or for a `jwk`-bound holder the id the offer's subject carries, next to the key in `cnf`.
  const subjectId = (vc.credentialSubject as Record<string, unknown>).id;
  const payload: Record<string, unknown> = {
    iss: input.issuerDid,
    ...(holder.did ? { sub: holder.did } : { ...(typeof subjectId === 'string' ? { sub: subjectId } : {}), cnf: { jwk: holder.jwk } }),
    nbf: iat,
    iat,
    exp,
    jti: id,
    vc,
  };
  return signCompactJws(signer, { typ: 'JWT' }, payload);
}

export function issueCredential(input: IssueInput): Promise<string> {
  return input.config.format === 'jwt_vc_json' ? issueJwtVcJson(input) : issueSdJwtVc(input);
}
