import { randomUUID } from 'node:crypto';
import { signCompactJws, type IssuerSigner } from '../keys/signer';
import { ietfStatusList, STATUS_SIZES, w3cEncodedList, type ListShape, type StatusEntries, type StatusSize } from './encoding';

export type StatusPurpose = 'revocation' | 'suspension' | 'refresh' | 'message';

/** W3C `statusMessage` element: `status` is the value in hexadecimal prefixed with `0x` (e.g. `0x2`). */
export interface StatusMessage {
  readonly status: string;
  readonly message: string;
}

export interface PublicationInput extends ListShape {
  /** The public URL this token is served at (IETF `sub`; W3C credential `id`). */
  readonly url: string;
  /** The issuer DID (`iss`; W3C `issuer`). */
  readonly issuer: string;
  /** W3C only: the IETF list has no purpose, its values have fixed meanings (1 invalid, 2 suspended). */
  readonly purpose: StatusPurpose;
  readonly entries: StatusEntries;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  readonly ttlSeconds: number;
  /** W3C only, required for purpose `message`: what each value means, one element per possible value. */
  readonly statusMessage?: readonly StatusMessage[];
}

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

function times(input: PublicationInput): { iat: number; exp: number } {
  const iat = epoch(input.issuedAt);
  const exp = epoch(input.expiresAt);
  if (!Number.isFinite(iat) || !Number.isFinite(exp) || exp <= iat) throw new RangeError('expiresAt must be a valid date later than issuedAt');
  if (!Number.isSafeInteger(input.ttlSeconds) || input.ttlSeconds < 1) throw new RangeError(`ttlSeconds must be a positive integer, not ${input.ttlSeconds}`);
  return { iat, exp };
}

/** IETF `statuslist+jwt`: header typ `statuslist+jwt`; payload { iss, sub: url, iat, exp, ttl, status_list: {bits, lst} }. */
export async function signIetfStatusListToken(input: PublicationInput, signer: IssuerSigner): Promise<string> {
  const { iat, exp } = times(input);
  return signCompactJws(signer, { typ: 'statuslist+jwt' }, {
    iss: input.issuer,
    sub: input.url,
    iat,
    exp,
    ttl: input.ttlSeconds,
    status_list: ietfStatusList(input, input.entries),
  });
}

/**
 * W3C BitstringStatusListCredential secured as a VC-JWT (VC-JOSE-COSE: typ `vc+jwt`, cty `vc`; the
 * payload is the credential itself plus iss/iat/exp/jti). validFrom/validUntil equal iat/exp to the
 * second; `ttl` is in milliseconds, as the W3C text defines it. jti is fresh per signing: each
 * publication is a different JWT (RFC 7519 §4.1.7), the credential `id` stays the list's URL.
 */
export async function signW3cStatusListCredential(input: PublicationInput, signer: IssuerSigner): Promise<string> {
  const { iat, exp } = times(input);
  // The text: purpose `message` needs statusSize and the messages on the list as well.
  if (input.purpose === 'message' && !input.statusMessage) throw new TypeError('a status list with purpose "message" needs statusMessage');
  if (input.statusMessage) checkStatusMessage(input.statusMessage, input.statusSize);
  const credential = {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    id: input.url,
    type: ['VerifiableCredential', 'BitstringStatusListCredential'],
    issuer: input.issuer,
    validFrom: new Date(iat * 1000).toISOString(),
    validUntil: new Date(exp * 1000).toISOString(),
    credentialSubject: {
      id: `${input.url}#list`,
      type: 'BitstringStatusList',
      statusPurpose: input.purpose,
      encodedList: w3cEncodedList(input, input.entries),
      ttl: input.ttlSeconds * 1000,
      ...(input.statusSize > 1 || input.purpose === 'message' ? { statusSize: input.statusSize } : {}),
      ...(input.statusMessage ? { statusMessage: input.statusMessage } : {}),
    },
  };
  return signCompactJws(signer, { typ: 'vc+jwt', cty: 'vc' }, { ...credential, iss: input.issuer, iat, exp, jti: `urn:uuid:${randomUUID()}` });
}

/** What an issued credential carries. */
export function ietfStatusClaim(uri: string, index: number): { status_list: { idx: number; uri: string } } {
  checkIndex(index);
  return { status_list: { idx: index, uri } };
}

/**
 * W3C BitstringStatusListEntry. `statusSize` appears only above 1 (1 is the default), and then
 * `statusMessage` is required with exactly 2**statusSize elements, one per value.
 */
export function w3cStatusEntry(args: {
  url: string;
  index: number;
  purpose: StatusPurpose;
  statusSize: StatusSize;
  statusMessage?: readonly { status: string; message: string }[];
}): Record<string, unknown> {
  const { url, index, purpose, statusSize, statusMessage } = args;
  checkIndex(index);
  if (!(STATUS_SIZES as readonly number[]).includes(statusSize)) throw new RangeError(`statusSize must be one of ${STATUS_SIZES.join(', ')}, not ${statusSize}`);
  if (statusSize > 1 && !statusMessage) throw new TypeError(`statusSize ${statusSize} needs statusMessage (the W3C text requires it above 1)`);
  if (statusMessage) checkStatusMessage(statusMessage, statusSize);
  return {
    id: `${url}#${index}`,
    type: 'BitstringStatusListEntry',
    statusPurpose: purpose,
    statusListIndex: String(index),
    statusListCredential: url,
    ...(statusSize > 1 ? { statusSize } : {}),
    ...(statusMessage ? { statusMessage: statusMessage.map(({ status, message }) => ({ status, message })) } : {}),
  };
}

function checkIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`status index must be a non-negative integer, not ${index}`);
}

/** One element per possible value (0 .. 2**size-1), each `status` a `0x`-prefixed hexadecimal string. */
function checkStatusMessage(messages: readonly StatusMessage[], statusSize: StatusSize): void {
  const count = 2 ** statusSize;
  const seen = new Set<number>();
  for (const m of messages) {
    if (!/^0x[0-9a-fA-F]+$/.test(m.status)) throw new RangeError(`statusMessage status ${JSON.stringify(m.status)} is not a 0x-prefixed hexadecimal value`);
    seen.add(Number.parseInt(m.status.slice(2), 16));
  }
  if (messages.length !== count || seen.size !== count || [...seen].some((v) => v >= count)) {
    throw new RangeError(`statusMessage must have one element for each of the ${count} values 0x0..0x${(count - 1).toString(16)}`);
  }
}
