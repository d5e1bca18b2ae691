import { buildDeps } from '../../functions/shared/deps';
import { macSecrets } from '../../functions/shared/secrets';
import { registrySessions, walletSessions } from '../../functions/shared/sessions';
import { loadConfig } from '../../lib/config';

const config = loadConfig({ KEY_BACKEND: 'local', TABLE_NAME: 't', LOCAL_MASTER_KEY: 'ab'.repeat(32) });

test("a function's wiring follows its declaration: a missing or an extra capability fails at cold start", () => {
  expect(() => buildDeps('authorizer', {}, config)).toThrow(/secrets wiring does not match/);
  expect(() => buildDeps('resolver', { secrets: macSecrets }, config)).toThrow(/secrets wiring does not match/);
  expect(() => buildDeps('dids', {}, config)).toThrow(/sessions wiring does not match/);
  expect(() => buildDeps('resolver', { sessions: walletSessions }, config)).toThrow(/sessions wiring does not match/);
  expect(buildDeps('webhook-delivery', { secrets: macSecrets, sessions: walletSessions }, config).fn).toBe('webhook-delivery');
  expect(() => buildDeps('tenancy', { secrets: macSecrets, sessions: walletSessions }, config)).toThrow(/registry wiring does not match/);
  expect(() => buildDeps('dids', { sessions: walletSessions, registry: registrySessions }, config)).toThrow(/registry wiring does not match/);
  expect(buildDeps('tenancy', { secrets: macSecrets, sessions: walletSessions, registry: registrySessions }, config).fn).toBe('tenancy');
});

test('a function that declares no MAC use cannot derive a secret', async () => {
  await expect(buildDeps('resolver', {}, config).secrets.derive('api-key-mac/v1')).rejects.toThrow(/declares no MAC use/);
});
