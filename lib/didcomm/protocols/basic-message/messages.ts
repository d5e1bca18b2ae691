import * as z from 'zod';
import { Envelope } from '../common';
import { DIDCOMM_PREFIX } from '../out-of-band/messages';

/** Basic message 1.0 (Aries RFC 0095). */
export const BASIC_MESSAGE_TYPE = `${DIDCOMM_PREFIX}basicmessage/1.0/message`;

/** The longest content we store or send (characters). */
export const MAX_CONTENT = 16 * 1024;

export const BasicMessage = Envelope.extend({
  content: z.string().max(MAX_CONTENT),
  sent_time: z.string().max(64).optional(),
  '~l10n': z.object({ locale: z.string().max(35).optional() }).loose().optional(),
});
