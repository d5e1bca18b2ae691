import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The API reference's renderer. Swagger UI (swagger-ui-dist) because it is plain static files: a
 * stylesheet with no web fonts or remote imports (its icons are data: URIs) and a script that runs
 * under script-src/style-src 'self' (no eval, no injected <style>), configured from a script file of
 * ours. Its one remote call, the validator badge, is turned off in docs-page.ts. Scalar injects
 * <style> elements (needs style-src 'unsafe-inline') and loads its fonts from its CDN by default;
 * Redoc 2 styles itself the same way (styled-components) and Redoc 3 does not install from our registry.
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
