import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { composeOfferEmail, type OfferEmail } from '../../lib/email/offer-message';

// A real offer URI has one parameter; the extra `&x="1"` checks escaping inside the href.
const OFFER_URI = 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Fw%2F3%2Foffers%2F01J9Z&x="1"';

const base: OfferEmail = {
  to: 'holder@example.org',
  from: 'Credential offers <offers@issuer.example>',
  issuerName: 'Universität Example',
  credentialName: 'University Degree',
  offerUri: OFFER_URI,
  expiresAt: new Date('2026-12-01T10:30:00Z'),
};

// keepCidLinks: by default simpleParser rewrites cid: links into data: URIs.
const parse = async (m: OfferEmail): Promise<ParsedMail> => simpleParser(await composeOfferEmail(m), { keepCidLinks: true });
const addresses = (a: AddressObject | AddressObject[] | undefined) => (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value.map((v) => v.address));
const escapedHref = OFFER_URI.replaceAll('&', '&amp;').replaceAll('"', '&quot;');

describe('composeOfferEmail', () => {
  test('headers, and a text part with the link and the expiry', async () => {
    const mail = await parse(base);
    expect(mail.subject).toBe('Universität Example offers you a University Degree');
    expect(addresses(mail.from)).toEqual(['offers@issuer.example']);
    expect(addresses(mail.to)).toEqual(['holder@example.org']);
    expect(mail.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
    expect(mail.text).toContain(OFFER_URI);
    expect(mail.text).toContain('2026-12-01T10:30:00.000Z');
    expect(mail.text).toContain('1 December 2026 at 10:30 UTC');
    expect(mail.text).not.toContain('transaction code');
  });

  test('HTML part: the escaped link, the expiry, and exactly one inline PNG that it references by cid', async () => {
    const mail = await parse(base);
    const html = mail.html as string;
    expect(html).toContain(`<a href="${escapedHref}"`);
    expect(html).toContain('1 December 2026 at 10:30 UTC');
    expect(html).toContain('2026-12-01T10:30:00.000Z');
    expect(html).not.toMatch(/src="https?:|<link|@import/);

    expect(mail.attachments).toHaveLength(1);
    const [qr] = mail.attachments;
    expect(qr).toMatchObject({ contentType: 'image/png', contentDisposition: 'inline', related: true });
    expect(qr!.cid).toBeTruthy();
    expect(html).toContain(`<img src="cid:${qr!.cid}"`);
  });

  test('the QR code is the offer URI (the pixels qrcode draws of it, at 300 px)', async () => {
    const mail = await parse(base);
    const options = { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 300 } as const;
    const gray = (png: Buffer) => {
      const img = PNG.sync.read(png);
      return { width: img.width, bytes: Buffer.from(img.data.filter((_, i) => i % 4 === 0)) };
    };
    const got = gray(mail.attachments[0]!.content);
    const expected = gray(await QRCode.toBuffer(OFFER_URI, options));
    expect(got.width).toBe(300);
    expect(got.bytes.equals(expected.bytes)).toBe(true);
    // Not a vacuous check: another payload makes another image.
    expect(expected.bytes.equals(gray(await QRCode.toBuffer(`${OFFER_URI}0`, options)).bytes)).toBe(false);
  });

  test('a transaction code, when given, is in both parts', async () => {
    const mail = await parse({ ...base, txCode: '493817' });
    expect(mail.text).toContain('transaction code: 493817');
    expect(mail.html).toContain('transaction code: <strong>493817</strong>');
  });

  test('tenant input is escaped in the HTML', async () => {
    const mail = await parse({ ...base, issuerName: '<script>alert(1)</script> & "Co"', credentialName: '<img src=x onerror=alert(2)>', txCode: '<b>1</b>' });
    const html = mail.html as string;
    expect(html).not.toMatch(/<script|<img src=x|<b>1/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;');
    expect(html).toContain('&lt;img src=x onerror=alert(2)&gt;');
    // The header is not HTML: the label comes through as written.
    expect(mail.subject).toBe('<script>alert(1)</script> & "Co" offers you a <img src=x onerror=alert(2)>');
  });

  test.each([
    ['to', { to: 'holder@example.org\r\nBcc: thief@evil.example' }],
    ['from', { from: 'offers@issuer.example\nBcc: thief@evil.example' }],
    ['issuerName', { issuerName: 'Acme\r\nBcc: thief@evil.example' }],
    ['credentialName', { credentialName: 'Badge\nBcc: thief@evil.example' }],
  ])('CR/LF in %s is refused', async (field, override) => {
    await expect(composeOfferEmail({ ...base, ...override })).rejects.toThrow(`${field} must not contain CR or LF`);
  });

  test('to and from must each be one address', async () => {
    await expect(composeOfferEmail({ ...base, to: 'holder@example.org, thief@evil.example' })).rejects.toThrow('to must be exactly one email address');
    await expect(composeOfferEmail({ ...base, to: 'not-an-address' })).rejects.toThrow('to must be exactly one email address');
    await expect(composeOfferEmail({ ...base, from: '' })).rejects.toThrow('from must be exactly one email address');
  });

  test('an offer URI with a script scheme, or an invalid expiry, is refused', async () => {
    await expect(composeOfferEmail({ ...base, offerUri: 'javascript:alert(1)' })).rejects.toThrow('offerUri must not use javascript:');
    await expect(composeOfferEmail({ ...base, offerUri: 'no scheme' })).rejects.toThrow('offerUri is not a URI');
    await expect(composeOfferEmail({ ...base, expiresAt: new Date('nope') })).rejects.toThrow('expiresAt is not a valid date');
  });
});
