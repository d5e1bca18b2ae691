// These packages ship JavaScript only: the parts lib/jsonld and its tests use, typed loosely where the
// libraries take and return JSON-LD documents.
type JsonLdDocument = Record<string, unknown>;
interface RemoteDocument {
  contextUrl: string | null;
  documentUrl: string;
  document: unknown;
}
type DocumentLoader = (url: string) => Promise<RemoteDocument>;
interface ExternalSigner {
  id: string;
  algorithm: string;
  sign(input: { data: Uint8Array }): Promise<Uint8Array>;
}

declare module 'jsonld' {
  const jsonld: {
    expand(input: unknown, options: { documentLoader: DocumentLoader; safe?: boolean; base?: string | null }): Promise<unknown[]>;
    processContext(activeCtx: unknown, localCtx: unknown, options: { documentLoader: DocumentLoader }): Promise<unknown>;
    canonize(input: unknown, options: Record<string, unknown>): Promise<string>;
  };
  export default jsonld;
}

declare module '@digitalbazaar/vc' {
  export function issue(options: { credential: JsonLdDocument; suite: unknown; documentLoader: DocumentLoader; purpose?: unknown; now?: string | Date }): Promise<JsonLdDocument>;
  export function _checkCredential(options: { credential: JsonLdDocument; mode: 'issue' | 'verify'; now?: string | Date }): void;
  export function verifyCredential(options: { credential: JsonLdDocument; suite: unknown; documentLoader: DocumentLoader; checkStatus?: unknown; now?: string | Date }): Promise<{ verified: boolean; error?: unknown; results?: unknown[]; statusResult?: unknown }>;
}

declare module '@digitalbazaar/ed25519-signature-2020' {
  export class Ed25519Signature2020 {
    constructor(options?: { signer?: ExternalSigner; date?: string | Date });
  }
}

declare module '@digitalbazaar/ed25519-signature-2018' {
  export class Ed25519Signature2018 {
    static readonly CONTEXT_URL: string;
    static readonly CONTEXT: unknown;
    constructor(options?: { signer?: ExternalSigner; date?: string | Date });
  }
}

declare module '@digitalbazaar/data-integrity' {
  export class DataIntegrityProof {
    constructor(options?: { signer?: ExternalSigner; date?: string | Date; cryptosuite: unknown });
  }
}

declare module '@digitalbazaar/eddsa-rdfc-2022-cryptosuite' {
  export const cryptosuite: { readonly name: string };
}

declare module '@digitalbazaar/ecdsa-rdfc-2019-cryptosuite' {
  export const cryptosuite: { readonly name: string };
}

declare module '@digitalbazaar/credentials-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
declare module '@digitalbazaar/data-integrity-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
declare module '@digitalbazaar/multikey-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
declare module '@digitalbazaar/security-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
declare module '@digitalbazaar/vc-bitstring-status-list-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
declare module 'did-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
declare module 'ed25519-signature-2018-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
declare module 'ed25519-signature-2020-context' {
  export const contexts: ReadonlyMap<string, unknown>;
}
