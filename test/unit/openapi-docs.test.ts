import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_CONTRACTS } from '../../lib/openapi/all-contracts';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { ERROR_CODES, OPERATION_ERROR_CODES } from '../../lib/openapi/error-codes';
import { OPERATION_EXAMPLES } from '../../lib/openapi/examples';
import { TAGS } from '../../lib/openapi/tags';
import { ROUTES } from '../../lib/service/routes';

/** What /docs shows a reader beyond the schemas: examples, error codes, tag order, the server. */

const doc = buildOpenApiDocument(ALL_CONTRACTS) as any;
const op = (r: (typeof ROUTES)[number]) => doc.paths[r.path][r.method.toLowerCase()];
const isJson = (type: string) => /^application\/(?:[\w.+-]+\+)?json$/.test(type);

const DOC_ID = 'openapi.json';
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
ajv.addVocabulary(['openapi', 'info', 'servers', 'tags', 'components', 'paths']);
ajv.addSchema({ ...doc, $id: DOC_ID });
const pointer = (...segments: string[]) => `${DOC_ID}#/${segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

describe('examples', () => {
  // Nothing to show: this document itself, the HTML page and its scripts, and a tails file's bytes.
  const NO_EXAMPLE = new Set(['getOpenApi', 'getDocsPage', 'getDocsAsset', 'getTailsFile']);

  test('every request body and every success response with a JSON or JWT body has one', () => {
    const missing: string[] = [];
    for (const r of ROUTES.filter((r) => !NO_EXAMPLE.has(r.operationId))) {
      const o = op(r);
      for (const [type, media] of Object.entries((o.requestBody?.content ?? {}) as Record<string, { example?: unknown }>)) {
        if (media.example === undefined) missing.push(`${r.operationId} request ${type}`);
      }
      const success = o.responses[String(ALL_CONTRACTS[r.operationId]!.status ?? 200)];
      const [type, media] = Object.entries((success.content ?? {}) as Record<string, { example?: unknown }>)[0] ?? [];
      if (type && media!.example === undefined) missing.push(`${r.operationId} response ${type}`);
    }
    expect(missing).toEqual([]);
  });

  test('no example is kept for an operation the route table no longer has', () => {
    expect(Object.keys(OPERATION_EXAMPLES).filter((id) => !ROUTES.some((r) => r.operationId === id))).toEqual([]);
  });

  test.each(ROUTES.filter((r) => OPERATION_EXAMPLES[r.operationId]).map((r) => [r.operationId, r] as const))('%s: its examples fit its schemas', (_id, r) => {
    const method = r.method.toLowerCase();
    const o = op(r);
    const failures: string[] = [];
    for (const [type, media] of Object.entries((o.requestBody?.content ?? {}) as Record<string, { example?: unknown }>)) {
      const validate = ajv.getSchema(pointer('paths', r.path, method, 'requestBody', 'content', type, 'schema'))!;
      if (!validate(media.example)) failures.push(`request: ${ajv.errorsText(validate.errors)}`);
    }
    const status = String(ALL_CONTRACTS[r.operationId]!.status ?? 200);
    for (const [type, media] of Object.entries((o.responses[status].content ?? {}) as Record<string, { example?: unknown }>)) {
      if (media.example === undefined) continue;
      const validate = ajv.getSchema(pointer('paths', r.path, method, 'responses', status, 'content', type, 'schema'))!;
      if (!validate(media.example)) failures.push(`response ${type}: ${ajv.errorsText(validate.errors)}`);
      if (!isJson(type)) expect(typeof media.example).toBe('string');
    }
    expect(failures).toEqual([]);
  });

  test("the offer's example shows the pre-authorized code grant by its name", () => {
    const offer = op(ROUTES.find((r) => r.operationId === 'issueCredentialOffer')!).responses['200'].content['application/json'].example;
    expect(Object.keys(offer.offer.grants)).toEqual(['urn:ietf:params:oauth:grant-type:pre-authorized_code']);
    expect(offer.offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'].tx_code.length).toBeGreaterThan(0);
  });
});

describe('error codes', () => {
  /** Every source file of the service but the catalogue itself. */
  function sources(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sources(path);
      return path.endsWith('.ts') && !path.endsWith(join('openapi', 'error-codes.ts')) ? [readFileSync(path, 'utf8')] : [];
    });
  }
  const code = [...sources('lib'), ...sources('functions')].join('\n');

  test('every code of the catalogue is one the service answers with (a string in its code)', () => {
    expect(Object.keys(ERROR_CODES).filter((c) => !code.includes(`'${c}'`))).toEqual([]);
  });

  test('every error response in the service shape lists its codes, each with its meaning, and allows only those', () => {
    const unlisted: string[] = [];
    for (const r of ROUTES) {
      for (const [status, response] of Object.entries(op(r).responses as Record<string, any>)) {
        if (Number(status) < 400) continue;
        const schema = response.content['application/json'].schema;
        if (ALL_CONTRACTS[r.operationId]!.errorBodies?.[Number(status)]) continue;
        const codes: string[] | undefined = schema.properties?.code?.enum;
        if (!codes?.length) {
          unlisted.push(`${r.operationId} ${status}`);
          continue;
        }
        for (const c of codes) expect(response.description).toContain(`\`${c}\`: ${ERROR_CODES[c as keyof typeof ERROR_CODES]}`);
        expect(response.content['application/json'].example).toEqual({ error: expect.any(String), code: codes[0] });
      }
    }
    expect(unlisted).toEqual([]);
  });

  test("an operation's own codes are all shown: each is for a status the operation declares", () => {
    const dropped: string[] = [];
    for (const [operationId, byStatus] of Object.entries(OPERATION_ERROR_CODES)) {
      const route = ROUTES.find((r) => r.operationId === operationId);
      if (!route) {
        dropped.push(`${operationId}: no such operation`);
        continue;
      }
      for (const [status, codes] of Object.entries(byStatus)) {
        const shown: string[] = op(route).responses[status]?.content?.['application/json']?.schema?.properties?.code?.enum ?? [];
        for (const c of codes ?? []) if (!shown.includes(c)) dropped.push(`${operationId} ${status} ${c}`);
      }
    }
    expect(dropped).toEqual([]);
  });
});

describe('tags and server', () => {
  test('every tag of the route table is described, in calling order, and every described tag is used', () => {
    const used = new Set(ROUTES.map((r) => r.tag));
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual(TAGS.map((t) => t.name));
    expect([...used].filter((t) => !TAGS.some((d) => d.name === t))).toEqual([]);
    expect(TAGS.filter((t) => !used.has(t.name)).map((t) => t.name)).toEqual([]);
    expect(TAGS.map((t) => t.name).slice(0, 4)).toEqual(['Subwallets', 'API keys', 'Wallet', 'DIDs']);
  });

  test('the server is the URL the document is served under, never "."', () => {
    expect(buildOpenApiDocument(ALL_CONTRACTS, 'https://api.example.com/prod').servers).toEqual([{ url: 'https://api.example.com/prod', description: expect.any(String) }]);
    expect(doc.servers[0].url).not.toBe('.');
  });
});
