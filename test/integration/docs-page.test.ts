import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { DOCS_RENDERER_FILES } from '../../lib/service/docs-assets';
import { ROUTES } from '../../lib/service/routes';
import { headlessChromium } from '../helpers/chromium';
import { expectError, startTestApi, type TestApi } from '../helpers/runtime';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.rt.stop();
});

describe('GET /docs over HTTP', () => {
  test('the page needs no key and is HTML under a same-origin CSP', async () => {
    const res = await fetch(`${api.rt.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-|https?:|\*/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await res.text()).toMatch(/<div id="swagger-ui"><\/div>/);
  });

  test.each([
    ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8', /SwaggerUIBundle/],
    ['swagger-ui.css', 'text/css; charset=utf-8', /\.swagger-ui/],
    ['docs-init.js', 'text/javascript; charset=utf-8', /SwaggerUIBundle\(/],
  ])('%s is served as %s, cacheable for a day', async (name, type, content) => {
    const res = await fetch(`${api.rt.url}/docs/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toMatch(content);
  });

  test('the allow-list is exactly the renderer files the page links to, and its initializer', async () => {
    const html = await (await fetch(`${api.rt.url}/docs`)).text();
    const linked = [...html.matchAll(/(?:href|src)="docs\/([^"]+)"/g)].map((m) => m[1]);
    expect(linked.sort()).toEqual([...Object.keys(DOCS_RENDERER_FILES), 'docs-init.js'].sort());
  });

  test.each(['index.html', 'swagger-ui.js.map', 'package.json', '..%2F..%2Fpackage.json', 'constructor', '__proto__'])(
    'anything off the allow-list is a 404 in the error shape: %s',
    async (name) => {
      const res = await api.call('GET', `/docs/${name}`);
      expectError(res, 404, 'asset_not_found');
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    },
  );
});

describe('GET /docs in headless Chromium', () => {
  let context: BrowserContext;
  let profile: string;
  let origin: string;
  /** Every request the browser made in the current test; anything off the runtime's origin is aborted too. */
  let requests: string[];
  beforeAll(async () => {
    // /usr/bin/chromium if installed, else the @sparticuz/chromium devDependency's build.
    const browser = await headlessChromium();
    profile = mkdtempSync(join(tmpdir(), 'docs-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: browser.executablePath,
      headless: true,
      env: { ...process.env, ...browser.env },
      args: [
        ...browser.args,
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // Belt and braces: no host name resolves, so nothing the browser tries can leave the machine.
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      ],
    });
    origin = new URL(api.rt.url).origin;
    await context.route('**/*', (route) => {
      requests.push(route.request().url());
      return new URL(route.request().url()).origin === origin ? route.continue() : route.abort('blockedbyclient');
    });
  });
  beforeEach(() => {
    requests = [];
  });
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** A fresh page on /docs; `problems` collects script errors and CSP violations (Chromium logs them as errors). */
  async function openDocs() {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${api.rt.url}/docs`);
    return { page, problems };
  }

  test("renders every operation of the route table, loading only from the runtime's origin, within its CSP", async () => {
    const { page, problems } = await openDocs();
    const blocks = page.locator('.opblock');
    await blocks.nth(ROUTES.length - 1).waitFor({ timeout: 30000 });

    const shown = await page.$$eval('.opblock', (els) =>
      els.map((el) => ({
        method: el.querySelector('.opblock-summary-method')?.textContent?.trim(),
        path: el.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
        summary: el.querySelector('.opblock-summary-description')?.textContent?.trim(),
      })),
    );
    expect(shown).toHaveLength(ROUTES.length);
    expect(new Set(shown.map((o) => `${o.method} ${o.path}`))).toEqual(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)));
    for (const path of ['/api/subwallet/create', '/api/v1/create-did', '/1.0/identifiers/{did}', '/docs']) {
      const route = ROUTES.find((r) => r.path === path)!;
      expect(shown).toContainEqual({ method: route.method, path, summary: route.summary });
    }

    expect(requests.map((u) => new URL(u).pathname)).toEqual(
      expect.arrayContaining(['/docs', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/docs-init.js', '/openapi.json']),
    );
    expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  test("examples are the service's own values: an offer shows the real grant name, and the Servers box names this API", async () => {
    const { page, problems } = await openDocs();
    // The Servers box: the URL the document was fetched from, never ".".
    await page.locator('.servers select').waitFor({ timeout: 30000 });
    expect(await page.locator('.servers select option').allTextContents()).toEqual([expect.stringMatching(new RegExp(`^${api.rt.url.replace(/[.]/g, '\\.')} - `))]);

    const op = page.locator('#operations-OID4VCI-issueCredentialOffer');
    await op.locator('.opblock-summary').click();
    const body = op.locator('.opblock-body');
    await body.locator('.responses-wrapper').waitFor();
    const text = (await body.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('"urn:ietf:params:oauth:grant-type:pre-authorized_code"');
    expect(text).toContain('"credential_subject"');
    expect(text).not.toMatch(/additionalProp|-9007199254740991/);
    // Each error status lists its codes with their meaning.
    expect(text).toContain('invalid_credential_subject');
    expect(problems).toEqual([]);
    await page.close();
  });

  test('"Try it out" calls the API on the same origin with the key given to Authorize', async () => {
    const w = await api.newWallet();
    const { page, problems } = await openDocs();
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    await page.locator('.auth-container input').fill(w.apiKey);
    await page.locator('.auth-btn-wrapper button.authorize').click();
    await page.locator('button.btn-done').click();
    const op = page.locator('#operations-Wallet-getOwnWallet');
    await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    await op.getByRole('button', { name: 'Execute' }).click();
    const response = op.locator('.live-responses-table tbody tr.response').first();
    await response.waitFor();
    expect(await response.locator('.response-col_status').textContent()).toBe('200');
    expect(await response.locator('.response-col_description').textContent()).toContain(`"wallet_id": ${w.walletId}`);
    expect(requests).toContain(`${origin}/api/v1/wallet`);
    expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
