import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RawRepresentation, type OperationImpls } from '../http/contract';
import { NotFoundError } from '../http/errors';
import { ALL_CONTRACTS } from '../openapi/all-contracts';
import { buildOpenApiDocument } from '../openapi/document';
import { DOCS_RENDERER_FILES } from '../service/docs-assets';
import type { metaContracts } from './contract';
import { DOCS_ASSET_CACHE, DOCS_CSP, DOCS_HTML, DOCS_INIT_FILE, DOCS_INIT_JS, DOCS_PAGE_CACHE } from './docs-page';

const JS = 'text/javascript; charset=utf-8';

export interface MetaOptions {
  /** Folder holding the renderer's files ({@link DOCS_RENDERER_FILES}). */
  readonly docsAssetsDir: string;
}

export function metaOperations(opts: MetaOptions): OperationImpls<typeof metaContracts> {
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  // The allow-list: only these names are ever read, so a request cannot name any other file.
  const assets = new Map<string, { mediaType: string; read: () => Promise<string> }>([
    ...Object.entries(DOCS_RENDERER_FILES).map(([name, mediaType]) => [name, { mediaType, read: () => readFile(join(opts.docsAssetsDir, name), 'utf8') }] as const),
    [DOCS_INIT_FILE, { mediaType: JS, read: async () => DOCS_INIT_JS }],
  ]);
  // Read once per instance; a missing file (a packaging fault) is a logged 500 and read again next time.
  const cache = new Map<string, string>();

  return {
    // Built once; only the server (the base URL this request came in on) differs between callers.
    getOpenApi: async ({ baseUrl }) => {
      document ??= buildOpenApiDocument(ALL_CONTRACTS);
      return { ...document, servers: [{ url: baseUrl, description: 'This deployment (the URL this document was fetched from)' }] };
    },
    getDocsPage: async () =>
      new RawRepresentation(DOCS_HTML, 'text/html; charset=utf-8', { 'content-security-policy': DOCS_CSP, 'cache-control': DOCS_PAGE_CACHE }),
    getDocsAsset: async ({ params }) => {
      const asset = assets.get(params.asset);
      if (!asset) throw new NotFoundError('Not a file of the API reference page', 'asset_not_found');
      const body = cache.get(params.asset) ?? (await asset.read());
      cache.set(params.asset, body);
      return new RawRepresentation(body, asset.mediaType, { 'cache-control': DOCS_ASSET_CACHE });
    },
  };
}
