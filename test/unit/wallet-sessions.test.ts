import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { ClientsByWallet, WalletSessions } from '../../lib/adapters/wallet-sessions';

const sts = mockClient(STSClient);
beforeEach(() => sts.reset());

let issued = 0;
function answerWithFreshCredentials(now: () => number) {
  sts.on(AssumeRoleCommand).callsFake(async () => {
    issued++;
    return { Credentials: { AccessKeyId: `AK${issued}`, SecretAccessKey: 's', SessionToken: `t${issued}`, Expiration: new Date(now() + 3600_000) } };
  });
}

test("a wallet's session is the tenant role assumed with its tag, once for all its clients, renewed five minutes before it expires", async () => {
  let now = Date.parse('2026-11-23T12:00:00Z');
  answerWithFreshCredentials(() => now);
  const sessions = new WalletSessions(new STSClient({ region: 'eu-west-1' }), 'arn:aws:iam::1:role/tenant', 'dids', () => now);
  const forDynamo = sessions.credentials('42');
  const forKms = sessions.credentials('42');
  const [a, b] = await Promise.all([forDynamo(), forKms()]);
  expect(a).toBe(b);
  expect(sts.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input)).toEqual([
    { RoleArn: 'arn:aws:iam::1:role/tenant', RoleSessionName: 'dids-w42', Tags: [{ Key: 'wallet_id', Value: '42' }], DurationSeconds: 3600 },
  ]);
  now += 54 * 60_000;
  expect(await forKms()).toBe(a); // still more than five minutes left
  now += 2 * 60_000;
  expect((await forDynamo()).accessKeyId).not.toBe(a.accessKeyId);
  expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(2);
  await sessions.credentials('43')();
  expect(sts.commandCalls(AssumeRoleCommand).at(-1)!.args[0].input.Tags).toEqual([{ Key: 'wallet_id', Value: '43' }]);
});

test('a failed AssumeRole is not cached: the next call tries again', async () => {
  sts
    .on(AssumeRoleCommand)
    .rejectsOnce(Object.assign(new Error('throttled'), { name: 'Throttling' }))
    .resolves({ Credentials: { AccessKeyId: 'AK', SecretAccessKey: 's', SessionToken: 'tok', Expiration: new Date(Date.now() + 3600_000) } });
  const sessions = new WalletSessions(new STSClient({ region: 'eu-west-1' }), 'arn:aws:iam::1:role/tenant', 'dids');
  await expect(sessions.credentials('7')()).rejects.toThrow('throttled');
  await expect(sessions.credentials('7')()).resolves.toMatchObject({ sessionToken: expect.stringMatching(/^t/) });
});

test("clients are kept per wallet, least recently used out, never the function's own", () => {
  let made = 0;
  const clients = new ClientsByWallet((w) => ({ w, n: ++made }), 2);
  const own = clients.get(null);
  clients.get('1');
  clients.get('2');
  clients.get('1'); // 2 is now the least recently used wallet
  clients.get('3');
  expect(clients.get(null)).toBe(own);
  expect(clients.get('1').n).toBe(2);
  expect(clients.get('2').n).toBe(made); // rebuilt
});
