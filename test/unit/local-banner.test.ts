import { spawnSync } from 'node:child_process';
import { banner } from '../../infra/local/banner';
import { parseBanner } from '../quickstart/local-stack';

const rt = { url: 'http://127.0.0.1:3000', mailViewerUrl: 'http://127.0.0.1:8005' };
const KEY = 'cisk_0123456789012345678901234567890123456789abcABCDEF';

describe("npm start's banner", () => {
  test('a generated key: one export line a shell takes as it is, with BASE_URL and BASE_API_KEY', () => {
    const text = banner({ ...rt, baseApiKey: KEY, baseApiKeyGenerated: true }, '.local-data');
    expect(parseBanner(text)).toEqual({ baseUrl: rt.url, baseApiKey: KEY, mailViewerUrl: rt.mailViewerUrl });
    expect(text).toMatch(/shown ONCE/);
    const line = text.split('\n').find((l) => l.trim().startsWith('export '))!;
    const shell = spawnSync('bash', ['-c', `${line}\nprintf '%s %s' "$BASE_URL" "$BASE_API_KEY"`], { encoding: 'utf8', env: {} });
    expect(shell.stdout).toBe(`${rt.url} ${KEY}`);
  });

  test('a key set through BASE_API_KEY is exported too', () => {
    expect(parseBanner(banner({ ...rt, baseApiKey: KEY, baseApiKeyGenerated: false }, '.local-data'))?.baseApiKey).toBe(KEY);
  });

  test('a later start knows no key: a placeholder, and how to get a key again', () => {
    const text = banner({ ...rt, baseApiKey: null, baseApiKeyGenerated: false }, '/tmp/data');
    expect(parseBanner(text)).toEqual({ baseUrl: rt.url, baseApiKey: null, mailViewerUrl: rt.mailViewerUrl });
    expect(text).toMatch(/BASE_API_KEY=<the key printed on the first start>/);
    expect(text).toMatch(/delete \/tmp\/data and start again, or start with BASE_API_KEY set/);
    expect(text).not.toMatch(/cisk_/);
  });
});
