// The package ships JavaScript only; the part the tests use.
declare module '@digitalbazaar/bitstring' {
  export class Bitstring {
    constructor(opts: { length: number } | { buffer: Uint8Array; leftToRightIndexing?: boolean });
    readonly length: number;
    set(position: number, on: boolean): void;
    get(position: number): boolean;
    encodeBits(): Promise<string>;
    static decodeBits(opts: { encoded: string }): Promise<Uint8Array>;
  }
}
