import { randomUUID } from 'node:crypto';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { qrPng } from '../qr/png';

export interface OfferEmail {
  readonly to: string;
  readonly from: string;
  /** The wallet's label (tenant input). */
  readonly issuerName: string;
  /** The configuration's display name, else its id. */
  readonly credentialName: string;
  /** openid-credential-offer://?credential_offer_uri=... (what a wallet opens). */
  readonly offerUri: string;
  readonly expiresAt: Date;
  /**
   * The transaction code, printed in the message when given. OpenID4VCI recommends sending it over
   * another channel than the offer: leave it out unless the code has no other way to the holder.
   */
  readonly txCode?: string;
}

/** The QR code image (PNG, 300 px, medium error correction). */
export const QR_OPTIONS = { errorCorrectionLevel: 'M', margin: 2, width: 300 } as const;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

// nodemailer folds CR/LF in headers into spaces, which still lets a label rewrite a header's meaning
// (an address into a display name); refuse instead.
function headerSafe(field: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new Error(`offer email: ${field} must not contain CR or LF`);
  return value;
}

/** One mailbox, so that an address list in a field cannot send someone's offer to another. */
function mailbox(field: 'to' | 'from', value: string): string {
  headerSafe(field, value);
  const parsed = addressparser(value, { flatten: true });
  if (parsed.length !== 1 || !/^[^@\s]+@[^@\s]+$/.test(parsed[0]!.address)) {
    throw new Error(`offer email: ${field} must be exactly one email address`);
  }
  return value;
}

/** It lands in an href: a script URL would run in webmail. */
function offerLink(uri: string): string {
  let scheme: string;
  try {
    scheme = new URL(uri).protocol;
  } catch {
    throw new Error('offer email: offerUri is not a URI');
  }
  if (['javascript:', 'data:', 'vbscript:', 'file:'].includes(scheme)) throw new Error(`offer email: offerUri must not use ${scheme}`);
  return uri;
}

function expiry(d: Date): { iso: string; human: string } {
  if (Number.isNaN(d.getTime())) throw new Error('offer email: expiresAt is not a valid date');
  const human = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(d);
  return { iso: d.toISOString(), human: `${human} UTC` };
}

function textBody(m: OfferEmail, exp: { iso: string; human: string }): string {
  return [
    `${m.issuerName} offers you a ${m.credentialName}.`,
    '',
    'To accept it, open this link on the device where your wallet is installed:',
    m.offerUri,
    '',
    'Or scan the QR code in the HTML version of this email with your wallet.',
    ...(m.txCode === undefined ? [] : ['', `Your wallet will ask for a transaction code: ${m.txCode}`]),
    '',
    `The offer expires on ${exp.human} (${exp.iso}).`,
    'If you did not expect this offer, ignore this email.',
    '',
  ].join('\n');
}

function htmlBody(m: OfferEmail, exp: { iso: string; human: string }, qrCid: string): string {
  const issuer = esc(m.issuerName);
  const credential = esc(m.credentialName);
  const href = esc(m.offerUri);
  const tx = m.txCode === undefined ? '' : `<p>Your wallet will ask for a transaction code: <strong>${esc(m.txCode)}</strong></p>\n`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${issuer} offers you a ${credential}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;color:#222;max-width:600px;margin:0 auto;padding:16px">
<p><strong>${issuer}</strong> offers you a <strong>${credential}</strong>.</p>
<p>Scan this QR code with your wallet:</p>
<p><img src="cid:${esc(qrCid)}" width="300" height="300" alt="QR code of the credential offer"></p>
<p>Or, on the device where your wallet is installed:</p>
<p><a href="${href}" style="display:inline-block;padding:12px 20px;background:#1a56db;color:#fff;text-decoration:none;border-radius:4px">Accept the credential</a></p>
${tx}<p>The offer expires on ${esc(exp.human)} (<time datetime="${exp.iso}">${exp.iso}</time>).</p>
<p style="font-size:12px;color:#666;word-break:break-all">If the button does not work, open this link in your wallet: ${href}</p>
<p style="font-size:12px;color:#666">If you did not expect this offer, ignore this email.</p>
</body></html>
`;
}

/** A raw RFC 5322 message: multipart/alternative (text, and HTML with the QR code inline as a cid: image). */
export async function composeOfferEmail(m: OfferEmail): Promise<Buffer> {
  const to = mailbox('to', m.to);
  const from = mailbox('from', m.from);
  const subject = `${headerSafe('issuerName', m.issuerName)} offers you a ${headerSafe('credentialName', m.credentialName)}`;
  const exp = expiry(m.expiresAt);
  const offerUri = offerLink(m.offerUri);
  const qr = qrPng(offerUri, QR_OPTIONS);
  const qrCid = `${randomUUID()}@offer-qr`;
  return new MailComposer({
    from,
    to,
    subject,
    text: textBody(m, exp),
    html: htmlBody(m, exp, qrCid),
    // A cid: image travels inside the message, so clients that block remote images still show it.
    attachments: [{ filename: 'credential-offer-qr.png', content: qr, contentType: 'image/png', cid: qrCid, contentDisposition: 'inline' }],
  })
    .compile()
    .build();
}
