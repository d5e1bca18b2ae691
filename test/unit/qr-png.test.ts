/**
 * lib/qr/png.ts draws the QR code qrcode's own PNG renderer draws (same modules, quiet zone and
 * scaling, pixel for pixel), as a valid 1-bit PNG that an independent decoder (pngjs) reads.
 */
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { qrPng, type QrPngOptions } from '../../lib/qr/png';
import { QR_OPTIONS } from '../../lib/email/offer-message';

/** One byte per pixel: 0 black, 255 white (throws on anything else, and pngjs checks every CRC). */
function pixels(png: Buffer): { side: number; gray: Uint8Array } {
  const img = PNG.sync.read(png);
  expect(img.width).toBe(img.height);
  const gray = new Uint8Array(img.width * img.height);
  let odd = 0;
  for (let p = 0; p < gray.length; p++) {
    const [r, g, b, a] = img.data.subarray(p * 4, p * 4 + 4);
    if (!(r === g && g === b && (r === 0 || r === 255) && a === 255)) odd++;
    gray[p] = r!;
  }
  expect(odd).toBe(0);
  return { side: img.width, gray };
}

const URL = 'http://127.0.0.1:3000/didcomm/iRiDhm8K1CuBxIFkS6aT5g?oob=eyJAdHlwZSI6Imh0dHBzOi8vZGlkY29tbS5vcmcvb3V0LW9mLWJhbmQvMS4xL2ludml0YXRpb24ifQ';

describe('qrPng', () => {
  test.each<[string, QrPngOptions]>([
    ['the invitation QR (level L, defaults)', { errorCorrectionLevel: 'L' }],
    ['the offer email QR (level M, margin 2, 300 px: a fractional scale)', QR_OPTIONS],
    ['a width below the symbol falls back to the scale', { errorCorrectionLevel: 'H', width: 20, scale: 3, margin: 1 }],
  ])('%s: the pixels of qrcode\'s own renderer', async (_, opts) => {
    const ours = pixels(qrPng(URL, opts));
    const theirs = pixels(await QRCode.toBuffer(URL, { type: 'png', ...opts }));
    expect(ours.side).toBe(theirs.side);
    expect(Buffer.from(ours.gray).equals(Buffer.from(theirs.gray))).toBe(true);
    // Not vacuous: another text is another image.
    expect(Buffer.from(pixels(qrPng(`${URL}x`, opts)).gray).equals(Buffer.from(ours.gray))).toBe(false);
  });

  test('is a much smaller file than the RGBA PNG', async () => {
    expect(qrPng(URL, QR_OPTIONS).length).toBeLessThan((await QRCode.toBuffer(URL, { type: 'png', ...QR_OPTIONS })).length);
  });
});
