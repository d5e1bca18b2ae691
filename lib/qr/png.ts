import { crc32, deflateSync } from 'node:zlib';
// qrcode's core only (the module matrix): its renderers entry brings pngjs and the SVG, UTF-8 and
// terminal renderers, about 45 KB of every bundle that draws a QR code. The PNG is written here.
import QRCodeCore from 'qrcode/lib/core/qrcode.js';

export interface QrPngOptions {
  readonly errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H';
  /** Quiet zone in modules (qrcode's `margin`, default 4). */
  readonly margin?: number;
  /** Image width in pixels (qrcode's `width`); without it each module is `scale` pixels (default 4). */
  readonly width?: number;
  readonly scale?: number;
}

/**
 * A QR code as a black-on-white PNG, laid out pixel for pixel as qrcode's own PNG renderer lays it out
 * (`test/unit/qr-png.test.ts` compares them), but written as a 1-bit grayscale image.
 */
export function qrPng(text: string, opts: QrPngOptions): Buffer {
  const { modules } = QRCodeCore.create(text, { errorCorrectionLevel: opts.errorCorrectionLevel });
  const margin = opts.margin ?? 4;
  const total = modules.size + margin * 2;
  // qrcode's renderer/utils.js: a width smaller than the symbol is ignored; a fractional scale is kept.
  const scale = opts.width && opts.width >= total ? opts.width / total : (opts.scale ?? 4);
  const side = Math.floor(total * scale);
  const scaledMargin = margin * scale;
  const rowBytes = Math.ceil(side / 8);
  const raw = Buffer.alloc((rowBytes + 1) * side); // each row: filter type 0, then 1 bit per pixel (1 = white)
  for (let i = 0; i < side; i++) {
    const row = i * (rowBytes + 1) + 1;
    for (let j = 0; j < side; j++) {
      const inside = i >= scaledMargin && j >= scaledMargin && i < side - scaledMargin && j < side - scaledMargin;
      const dark = inside && modules.data[Math.floor((i - scaledMargin) / scale) * modules.size + Math.floor((j - scaledMargin) / scale)];
      if (!dark) raw[row + (j >> 3)]! |= 0x80 >> (j & 7);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, grayscale, deflate, no filter method extras, no interlace
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
