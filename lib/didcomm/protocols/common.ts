import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { normaliseType } from './out-of-band/messages';

/** Fields every DIDComm v1 message we read has, bounded (they come from anyone). */
export const Thread = z.object({ thid: z.string().min(1).max(256).optional(), pthid: z.string().min(1).max(8192).optional() });
export const MessageId = z.string().min(1).max(256);
export const MessageType = z.string().min(1).max(256).transform(normaliseType);

export const Envelope = z.object({ '@type': MessageType, '@id': MessageId, '~thread': Thread.optional() });

/** The thread a message belongs to: its `~thread.thid`, else its own `@id` (RFC 0008). */
export function threadOf(m: { '@id': string; '~thread'?: { thid?: string | undefined } | undefined }): string {
  return m['~thread']?.thid ?? m['@id'];
}

export function newMessageId(): string {
  return randomUUID();
}

/** An RFC 0017 attachment as DID Exchange carries them (base64 data, optionally signed). */
export const Attachment = z.object({
  '@id': z.string().max(256).optional(),
  'mime-type': z.string().max(256).optional(),
  data: z.object({
    base64: z.string().max(64 * 1024).optional(),
    json: z.unknown().optional(),
    jws: z
      .object({
        header: z.object({ kid: z.string().max(1024).optional() }).loose().optional(),
        protected: z.string().max(4096).optional(),
        signature: z.string().max(1024).optional(),
        signatures: z.array(z.object({ header: z.object({ kid: z.string().max(1024).optional() }).loose().optional(), protected: z.string().max(4096), signature: z.string().max(1024) })).max(5).optional(),
      })
      .optional(),
  }),
});
export type Attachment = z.output<typeof Attachment>;
