/**
 * Bundled in place of `@digitalbazaar/http-client` (BUNDLE_ALIASES), the HTTP client of jsonld's node
 * document loader: it imports `undici` (~410 KB bundled) and `ky` at load, yet every JSON-LD document
 * loader here is offline (lib/jsonld/loader.ts) and never fetches. Anything that does call it fails loudly.
 */
function refuse(): never {
  throw new Error('No HTTP client is bundled: this function never fetches JSON-LD documents over the network (lib/jsonld/loader.ts)');
}

export const httpClient = { get: refuse, post: refuse, put: refuse, patch: refuse, delete: refuse, head: refuse };
