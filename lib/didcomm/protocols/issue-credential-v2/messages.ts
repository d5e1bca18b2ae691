import * as z from 'zod';
import { Envelope, MessageId, newMessageId } from '../common';
import { DIDCOMM_PREFIX } from '../out-of-band/messages';

/**
 * Issue Credential 2.0 (Aries RFC 0453): the messages the issuer side sends and reads. The attachments
 * are format-specific (formats.ts); each message names its formats in `formats`, each one pointing at
 * its attachment by `attach_id`.
 */
export const ISSUE_CREDENTIAL_V2 = `${DIDCOMM_PREFIX}issue-credential/2.0`;
export const OFFER_CREDENTIAL_TYPE = `${ISSUE_CREDENTIAL_V2}/offer-credential`;
export const REQUEST_CREDENTIAL_TYPE = `${ISSUE_CREDENTIAL_V2}/request-credential`;
export const ISSUE_CREDENTIAL_TYPE = `${ISSUE_CREDENTIAL_V2}/issue-credential`;
export const CREDENTIAL_ACK_TYPE = `${ISSUE_CREDENTIAL_V2}/ack`;
export const CREDENTIAL_PROBLEM_REPORT_TYPE = `${ISSUE_CREDENTIAL_V2}/problem-report`;
/** Messages of the protocol a holder sends us (a proposal is not taken: exchanges start with our offer). */
export const HOLDER_MESSAGE_TYPES = [REQUEST_CREDENTIAL_TYPE, CREDENTIAL_ACK_TYPE, CREDENTIAL_PROBLEM_REPORT_TYPE, `${ISSUE_CREDENTIAL_V2}/propose-credential`] as const;

export function isIssueCredentialV2(type: string): boolean {
  return type.startsWith(`${ISSUE_CREDENTIAL_V2}/`);
}

/**
 * The largest attachment we read from a holder (its decoded JSON): a request repeats the offered
 * credential, itself at most 64 KiB (lib/jsonld/issuance.ts), with room for what the holder adds.
 */
export const MAX_ATTACHMENT_BYTES = 80 * 1024;

const FormatSpec = z.object({ attach_id: z.string().min(1).max(256), format: z.string().min(1).max(256) });
const AttachmentData = z.object({ base64: z.string().max(Math.ceil((MAX_ATTACHMENT_BYTES * 4) / 3) + 4).optional(), json: z.unknown().optional() });
const Attachment = z.object({ '@id': z.string().min(1).max(256), 'mime-type': z.string().max(256).optional(), data: AttachmentData });

export const RequestCredential = Envelope.extend({
  comment: z.string().max(4096).nullish(),
  formats: z.array(FormatSpec).min(1).max(5),
  'requests~attach': z.array(Attachment).min(1).max(5),
});
export const CredentialAck = Envelope.extend({ status: z.string().max(64).optional() });
export const CredentialProblemReport = Envelope.extend({
  description: z.object({ code: z.string().max(256).optional(), en: z.string().max(2048).optional() }).loose().optional(),
  explain: z.string().max(2048).optional(),
});

/** An RFC 0017 attachment's JSON (base64 or inline json); undefined when it holds neither or is too large. */
export function attachmentJson(a: z.output<typeof Attachment>): unknown {
  if (a.data.json !== undefined) return Buffer.byteLength(JSON.stringify(a.data.json), 'utf8') <= MAX_ATTACHMENT_BYTES ? a.data.json : undefined;
  if (a.data.base64 === undefined) return undefined;
  const text = Buffer.from(a.data.base64, 'base64').toString('utf8');
  if (Buffer.byteLength(text, 'utf8') > MAX_ATTACHMENT_BYTES) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The attachment a message names for `format` (its `formats` entry, then its attachment by id). */
export function attachmentFor(m: { formats: { attach_id: string; format: string }[] }, attachments: z.output<typeof Attachment>[], format: string): unknown {
  const spec = m.formats.find((f) => f.format === format);
  if (!spec) return undefined;
  const a = attachments.find((x) => x['@id'] === spec.attach_id);
  return a ? attachmentJson(a) : undefined;
}

const attach = (id: string, data: unknown) => ({ '@id': id, 'mime-type': 'application/json', data: { base64: Buffer.from(JSON.stringify(data), 'utf8').toString('base64') } });

export const CREDENTIAL_PREVIEW_TYPE = `${ISSUE_CREDENTIAL_V2}/credential-preview`;

/** An RFC 0453 credential preview's attributes (AnonCreds offers carry one; ld_proof offers show the credential itself). */
export type PreviewAttribute = { readonly name: string; readonly value: string };

/** Our offer: one attachment of the exchange's format; its `@id` is the exchange's thread id. */
export function offerMessage(o: {
  id: string;
  format: string;
  attachId: string;
  data: unknown;
  comment?: string | null | undefined;
  parentThreadId?: string | null | undefined;
  preview?: readonly PreviewAttribute[] | undefined;
}): Record<string, unknown> {
  return {
    '@type': OFFER_CREDENTIAL_TYPE,
    '@id': o.id,
    ...(o.comment ? { comment: o.comment } : {}),
    ...(o.preview ? { credential_preview: { '@type': CREDENTIAL_PREVIEW_TYPE, attributes: o.preview.map((a) => ({ name: a.name, 'mime-type': 'text/plain', value: a.value })) } } : {}),
    formats: [{ attach_id: o.attachId, format: o.format }],
    'offers~attach': [attach(o.attachId, o.data)],
    ...(o.parentThreadId ? { '~thread': { pthid: o.parentThreadId } } : {}),
  };
}

/** The credential, on the exchange's thread; the holder acks it (`~please_ack` on outcome). */
export function issueMessage(o: { threadId: string; format: string; attachId: string; data: unknown }): Record<string, unknown> {
  return {
    '@type': ISSUE_CREDENTIAL_TYPE,
    '@id': newMessageId(),
    '~thread': { thid: o.threadId },
    formats: [{ attach_id: o.attachId, format: o.format }],
    'credentials~attach': [attach(o.attachId, o.data)],
    '~please_ack': { on: ['OUTCOME'] },
  };
}

/** RFC 0035 problem report on the exchange's thread: the exchange is abandoned. */
export function problemReportMessage(threadId: string, code: string, text: string): Record<string, unknown> {
  return { '@type': CREDENTIAL_PROBLEM_REPORT_TYPE, '@id': newMessageId(), '~thread': { thid: threadId }, description: { code, en: text.slice(0, 1000) } };
}

export { MessageId };
