// qrcode ships no types for its core module (the symbol, without renderers); the part lib/qr/png.ts uses.
declare module 'qrcode/lib/core/qrcode.js' {
  const QRCodeCore: {
    create(text: string, options: { errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H' }): { modules: { size: number; data: Uint8Array } };
  };
  export default QRCodeCore;
}
