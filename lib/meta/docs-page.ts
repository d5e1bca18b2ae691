/**
 * The /docs page: Swagger UI over our /openapi.json, everything from our own origin. URLs are relative
 * so the page works under any stage path (`/prod/docs` loads `/prod/docs/…` and `/prod/openapi.json`).
 */

/** Our initializer, served as /docs/docs-init.js: a file rather than an inline script, so the CSP needs no nonce. */
export const DOCS_INIT_FILE = 'docs-init.js';

export const DOCS_INIT_JS = `window.ui = SwaggerUIBundle({
  url: new URL('openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  // The default sends the document's URL to validator.swagger.io for a badge.
  validatorUrl: null,
});
`;

// The data: icon keeps the browser from asking for /favicon.ico.
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference: credential issuance and verification service</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/${DOCS_INIT_FILE}"></script>
</body>
</html>
`;

/**
 * Our origin only. img-src allows data: for the stylesheet's SVG icons; connect-src 'self' covers the
 * document and "Try it out". Nothing inline, no eval.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The page may change with any deploy; the assets change only with the renderer's version. */
export const DOCS_PAGE_CACHE = 'public, max-age=300';
export const DOCS_ASSET_CACHE = 'public, max-age=86400';
