import { Agent, request } from 'node:http';
import { SOURCE_LIMITS } from '../../lib/service/api-settings';
import { SOURCE_LIMITED } from '../../lib/service/gateway-responses';
import { ok, startTestApi, walletWithPublicDid, type TestApi } from '../helpers/runtime';

/**
 * Issue 20 §4: a burst of anonymous requests from one address used to make every tenant's did.json
 * answer 429, the public route's bucket being one for the world. With the stage's per-source limits
 * (the local gateway applies SOURCE_LIMITS per socket address, as WAF does per client IP), that address
 * ends refused while every other address is served. Sources are loopback addresses (the client socket's
 * local address); the runtime's defaults stand, per-source limits included.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ sourceLimits: SOURCE_LIMITS });
});
afterAll(async () => {
  await api?.rt.stop();
});

function getFrom(agent: Agent, path: string): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(api.rt.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject).end();
  });
}

test("one address spending its public allowance is refused; another address still gets a tenant's did.json", async () => {
  const tenant = await walletWithPublicDid(api, { method: 'web', options: { key_type: 'p256' } });
  const didJson = `/dids/${tenant.did.split(':').pop()}/did.json`;
  // A DID document nobody published: a did:web DID of the tenant that was never made public (404).
  const unpublished = (await ok(api.call('POST', '/api/v1/create-did', { key: tenant.key, body: { method: 'web', options: { key_type: 'p256' } } }), 'create-did')).did.did as string;
  const missing = `/dids/${unpublished.split(':').pop()}/did.json`;

  const attacker = new Agent({ keepAlive: true, maxSockets: 16, localAddress: '127.0.0.2' });
  const other = new Agent({ keepAlive: true, localAddress: '127.0.0.3' });
  try {
    const sent = SOURCE_LIMITS.publicRequests + 40;
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: sent }, () => getFrom(attacker, missing)));
    const elapsed = Date.now() - started;
    const refused = answers.filter((a) => a.status === 429);
    // Every request within the allowance reached the resolver (404); every one past it was refused by the source limit.
    expect(answers.filter((a) => a.status === 404)).toHaveLength(SOURCE_LIMITS.publicRequests);
    expect(refused).toHaveLength(sent - SOURCE_LIMITS.publicRequests);
    for (const r of refused) expect(r.body).toEqual({ error: SOURCE_LIMITED.error, code: SOURCE_LIMITED.code });
    expect(elapsed).toBeLessThan(SOURCE_LIMITS.windowSeconds * 1000); // all inside one window

    // The same route, and another public route, from another address: served.
    const doc = await getFrom(other, didJson);
    expect(doc.status).toBe(200);
    expect(doc.body.id).toBe(tenant.did);
    expect((await getFrom(other, '/openapi.json')).status).toBe(200);
    // The first address stays refused, on any public route.
    expect(await getFrom(attacker, didJson)).toEqual({ status: SOURCE_LIMITED.status, body: { error: SOURCE_LIMITED.error, code: SOURCE_LIMITED.code } });
    expect((await getFrom(attacker, '/openapi.json')).status).toBe(429);
    // Its admin API calls are not public requests: the tenant's key still works from it.
    const headers = { 'x-api-key': tenant.key };
    const own = await new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(api.rt.url);
      request({ host: hostname, port, path: '/api/v1/wallet', agent: attacker, headers }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
        .on('error', reject)
        .end();
    });
    expect(own).toBe(200);
  } finally {
    attacker.destroy();
    other.destroy();
  }
});
