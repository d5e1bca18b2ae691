import * as z from 'zod';

/**
 * Out-of-Band 1.1 (Aries RFC 0434) invitation messages. Type URIs are compared after normalising the
 * legacy `did:sov:BzCbsNYhMrjHiqZDTUASHg;spec/` prefix to `https://didcomm.org/`, as RFC 0348 asks.
 */
export const DIDCOMM_PREFIX = 'https://didcomm.org/';
const LEGACY_PREFIX = 'did:sov:BzCbsNYhMrjHiqZDTUASHg;spec/';

export function normaliseType(type: string): string {
  return type.startsWith(LEGACY_PREFIX) ? DIDCOMM_PREFIX + type.slice(LEGACY_PREFIX.length) : type;
}

export const OOB_INVITATION_TYPES = [`${DIDCOMM_PREFIX}out-of-band/1.1/invitation`, `${DIDCOMM_PREFIX}out-of-band/1.0/invitation`] as const;
export const DIDEXCHANGE_1_1 = `${DIDCOMM_PREFIX}didexchange/1.1`;
export const DIDEXCHANGE_1_0 = `${DIDCOMM_PREFIX}didexchange/1.0`;
/** What our invitations offer, preferred first; the protocol the peer picks is the one its request's type names. */
export const HANDSHAKE_PROTOCOLS = [DIDEXCHANGE_1_1, DIDEXCHANGE_1_0] as const;

/** Bounds on what we accept from others' invitations: they are stored, and each service may be contacted. */
const MAX_SERVICES = 5;
const MAX_KEYS = 10;
const Text = (max: number) => z.string().max(max);

const InlineService = z.object({
  id: Text(512),
  type: z.literal(['did-communication', 'DIDCommMessaging']),
  recipientKeys: z.array(Text(512)).min(1).max(MAX_KEYS),
  routingKeys: z.array(Text(512)).max(MAX_KEYS).optional(),
  serviceEndpoint: Text(2048),
});

export const OutOfBandInvitation = z.object({
  '@type': Text(256).transform(normaliseType).pipe(z.enum(OOB_INVITATION_TYPES)),
  '@id': Text(256).min(1),
  label: Text(512).optional(),
  goal_code: Text(512).optional(),
  goal: Text(2048).optional(),
  accept: z.array(Text(256)).max(20).optional(),
  handshake_protocols: z.array(Text(256).transform(normaliseType)).min(1).max(10),
  // An inline service, or a DID whose document names the service (did:peer).
  services: z.array(z.union([InlineService, Text(8192)])).min(1).max(MAX_SERVICES),
});
export type OutOfBandInvitation = z.output<typeof OutOfBandInvitation>;
export type InlineService = z.output<typeof InlineService>;

/** An RFC 0056 `~service` decorator (connectionless messages): keys as base58 verkeys. */
export interface ServiceDecorator {
  readonly recipientKeys: string[];
  readonly routingKeys: string[];
  readonly serviceEndpoint: string;
}

export interface NewInvitation {
  readonly id: string;
  readonly label: string;
  readonly recipientKey: string;
  readonly endpoint: string;
  readonly goalCode: string | null;
  readonly goal: string | null;
  /** false: a connectionless invitation (no `handshake_protocols`; it carries its messages in `requests~attach`). */
  readonly handshake?: boolean;
}

/** Our invitation: an inline service with our invitation key as did:key, DID Exchange 1.1 then 1.0 (unless connectionless). */
export function buildInvitation(n: NewInvitation): Record<string, unknown> {
  return {
    '@type': OOB_INVITATION_TYPES[0],
    '@id': n.id,
    label: n.label,
    ...(n.goalCode !== null ? { goal_code: n.goalCode } : {}),
    ...(n.goal !== null ? { goal: n.goal } : {}),
    accept: ['didcomm/aip1', 'didcomm/aip2;env=rfc19'],
    ...(n.handshake === false ? {} : { handshake_protocols: [...HANDSHAKE_PROTOCOLS] }),
    services: [{ id: '#inline', type: 'did-communication', recipientKeys: [n.recipientKey], routingKeys: [], serviceEndpoint: n.endpoint }],
  };
}

/** The invitation URL as ACA-Py and Credo write it: the endpoint with `oob=<base64url of the JSON>`. */
export function invitationUrl(endpoint: string, invitation: Record<string, unknown>): string {
  return `${endpoint}?oob=${Buffer.from(JSON.stringify(invitation)).toString('base64url')}`;
}

/** The largest invitation URL or JSON we read. */
export const MAX_INVITATION_BYTES = 16 * 1024;

/**
 * The invitation inside an invitation URL (`oob=`, base64url or base64): null when the URL carries
 * none. URLs that only point to one (`?_oobid=` short links) are not fetched: that would make us call
 * a URL a caller chose.
 */
export function invitationFromUrl(url: string): unknown {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const encoded = parsed.searchParams.get('oob');
  if (encoded === null) return null;
  try {
    return JSON.parse(Buffer.from(encoded.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8'));
  } catch {
    return null;
  }
}
