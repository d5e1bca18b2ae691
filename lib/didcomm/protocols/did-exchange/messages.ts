import * as z from 'zod';
import { Attachment, Envelope, MessageId, Thread } from '../common';
import { DIDCOMM_PREFIX } from '../out-of-band/messages';

/** DID Exchange 1.1 and 1.0 (Aries RFC 0023): the same messages; 1.1 signs a rotated DID instead of attaching a document. */
export const DIDEXCHANGE_VERSIONS = ['1.1', '1.0'] as const;
export type DidExchangeVersion = (typeof DIDEXCHANGE_VERSIONS)[number];

export const didExchangeType = (version: DidExchangeVersion, name: 'request' | 'response' | 'complete' | 'problem_report') => `${DIDCOMM_PREFIX}didexchange/${version}/${name}`;

/** The protocol version and message name of a DID Exchange type, or null. */
export function parseDidExchangeType(type: string): { version: DidExchangeVersion; name: string } | null {
  const m = /^https:\/\/didcomm\.org\/didexchange\/(1\.[01])\/([a-z_]+)$/.exec(type);
  return m ? { version: m[1] as DidExchangeVersion, name: m[2]! } : null;
}

const Did = z.string().min(1).max(8192);

export const DidExchangeRequest = Envelope.extend({
  label: z.string().max(512).optional(),
  goal_code: z.string().max(512).optional(),
  goal: z.string().max(2048).optional(),
  did: Did,
  'did_doc~attach': Attachment.optional(),
});
export type DidExchangeRequest = z.output<typeof DidExchangeRequest>;

export const DidExchangeResponse = Envelope.extend({
  '~thread': Thread.extend({ thid: MessageId }),
  did: Did,
  'did_doc~attach': Attachment.optional(),
  'did_rotate~attach': Attachment.optional(),
});
export type DidExchangeResponse = z.output<typeof DidExchangeResponse>;

export const DidExchangeComplete = Envelope.extend({ '~thread': Thread.extend({ thid: MessageId }) });

export const ProblemReport = Envelope.extend({
  'problem-code': z.string().max(256).optional(),
  description: z.object({ code: z.string().max(256).optional(), en: z.string().max(2048).optional() }).loose().optional(),
  explain: z.string().max(2048).optional(),
});
