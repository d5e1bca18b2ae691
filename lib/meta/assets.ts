import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The API reference's renderer. Swagger UI (swagger-ui-dist) because it is plain static files: a
 * stylesheet with no web fonts or remote imports (its icons are data: URIs), a script that runs
 * without eval or injected <style> elements, configured from a script file of ours. Its only remote
 * call, the online validator badge, is turned off in docs-page.ts. Redoc and Scalar inject styles at
 * run time (style-src 'unsafe-inline'); Scalar also loads its fonts from its CDN by default, and
 * Redoc 3 does not install from our registry.
 */
export const DOCS_RENDERER_PACKAGE = 'swagger-ui-dist';

/** The renderer's files that /docs/{asset} serves, and nothing else: the allow-list, with media types. */
export const DOCS_RENDERER_FILES: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

/** The renderer's folder in node_modules: the local runtime serves from it, the stack copies from it. */
export function docsRendererDir(): string {
  return dirname(createRequire(import.meta.url).resolve(`${DOCS_RENDERER_PACKAGE}/package.json`));
}

/** The renderer's files for the meta function's bundle (name -> where to copy it from). */
export function docsRendererBundleFiles(): Record<string, { readonly copyFrom: string }> {
  const dir = docsRendererDir();
  return Object.fromEntries(Object.keys(DOCS_RENDERER_FILES).map((name) => [name, { copyFrom: join(dir, name) }]));
}
