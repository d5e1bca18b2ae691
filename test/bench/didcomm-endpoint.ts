/**
 * Part of `npm run bench` (`BENCH_ONLY=didcomm-endpoint`): DIDComm v1 through the local runtime.
 * BENCH_PEER_CPU_PROF=<dir>: the runtime's process runs with `--cpu-prof` into <dir>.
 *
 * 1. The public endpoint `POST /didcomm/{public_ref}`: envelopes accepted (202) per second and their
 *    latency: one sender paced (one every BENCH_DIDCOMM_PACED_MS, 100: the endpoint's own latency, the
 *    worker done with one before the next), then 1 and 10 senders back to back. Each envelope is a distinct trust ping, anoncrypted with
 *    lib/didcomm/envelope.ts to a real invitation key of the wallet (so it is stored and queued, not
 *    taken without telling); they are packed beforehand, untimed. The inbound worker handles them in
 *    the same runtime meanwhile, as it would.
 * 2. A basic-message round trip with Credo 0.6.3 on loopback (test/helpers/credo-didcomm.ts): Credo
 *    sends → the message is listed by GET /api/v1/messages (polled every BENCH_DIDCOMM_POLL_MS) → our
 *    POST /api/v1/messages replies → Credo has the reply. Beside it, the same round trip between two
 *    Credo peers in this process (each answers as soon as its agent has the message), rounds alternated.
 *
 * Our runtime runs in its own child process (peer/ours.ts, as issuance-peer.ts starts it), so that the
 * senders and the Credo agents here do not share its event loop; its CPU is read from /proc.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { generateKeyPair, packMessage, verkeyFromPublicKey } from '../../lib/didcomm/envelope';
import { startCredoPeer } from '../helpers/credo-didcomm';
import { processCpuMs } from '../helpers/processes';
import { childPids } from './peer/shared';
import { apiCaller, benchTenants } from './admin';
import { startOurs, stopOurs, until } from './peer/process';
import { loadAverage } from './stats';

const env = process.env;
const ENVELOPES: Record<number, number> = { 1: Number(env.BENCH_DIDCOMM_ENVELOPES_1 ?? 200), 10: Number(env.BENCH_DIDCOMM_ENVELOPES_10 ?? 500) };
const ROUNDS = Number(env.BENCH_DIDCOMM_ROUNDS ?? 30);
const POLL_MS = Number(env.BENCH_DIDCOMM_POLL_MS ?? 10);
const PACED_MS = Number(env.BENCH_DIDCOMM_PACED_MS ?? 100);
const ENVELOPE_TYPE = 'application/didcomm-envelope-enc';

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sortNum = (xs: number[]) => [...xs].sort((a, b) => a - b);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** `n` calls of `fn`, `concurrency` at a time; what each returns (its duration in ms). */
async function pool(n: number, concurrency: number, fn: (i: number) => Promise<number>): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) times.push(await fn(i));
    }),
  );
  return times;
}


/** Waits until the processes use under 10 % of a core over a second (the worker's backlog is done). */
async function quiet(pids: number[], timeoutMs = 120_000): Promise<void> {
  const cpu = () => pids.reduce((a, p) => a + processCpuMs(p), 0);
  const end = Date.now() + timeoutMs;
  for (;;) {
    const before = cpu();
    await sleep(1000);
    if (cpu() - before < 100 || Date.now() > end) return;
  }
}

async function main() {
  console.log('\n### DIDComm v1 through the local runtime: the public endpoint, and a round trip with Credo 0.6.3\n');
  console.log(`Load average at start: ${loadAverage()}.\n`);
  const ours = await startOurs({ execArgv: env.BENCH_PEER_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${env.BENCH_PEER_CPU_PROF}`] : [] });
  const [credoA, credoB] = await Promise.all([startCredoPeer({ label: 'bench-credo-a' }), startCredoPeer({ label: 'bench-credo-b' })]);
  const pids = [ours.child.pid!, ...childPids(ours.child.pid!, 'java')];
  try {
    const call = apiCaller(ours.url);
    const newWallet = async (name: string) => {
      const { key } = await benchTenants(call, ours.baseApiKey).newWallet(name);
      return { key, publicRef: (await call('GET', '/api/v1/wallet', key)).public_ref as string };
    };

    // 1. The public endpoint.
    const inbound = await newWallet('bench-didcomm-inbound');
    const inv = await call('POST', '/api/v1/invitations', inbound.key, { alias: 'bench' });
    const invitationKey = (await call('GET', `/api/v1/invitations/${inv.invitation_id}`, inbound.key)).invitation_key as string;
    const endpoint = `${ours.url}/didcomm/${inbound.publicRef}`;
    const post = async (body: string) => {
      const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': ENVELOPE_TYPE }, body });
      await res.arrayBuffer();
      if (res.status !== 202) throw new Error(`POST /didcomm/{public_ref}: ${res.status}`);
    };
    const ping = (to = invitationKey) => Buffer.from(packMessage({ '@type': 'https://didcomm.org/trust_ping/1.0/ping', '@id': randomUUID(), response_requested: false }, [to])).toString();
    const strangerKey = verkeyFromPublicKey(generateKeyPair().publicKey);
    const warm = Array.from({ length: 30 }, ping);
    for (const e of warm) await post(e);
    await quiet(pids);
    const rows: string[] = [];
    // The first row: one envelope every PACED_MS, so the worker has handled one before the next arrives
    // (the endpoint's own latency); then back to back, where the worker's work competes with the
    // endpoint's for the same cores; the last row: envelopes for no key of the wallet (202, neither
    // stored nor queued): the lookup alone.
    const rowsToRun = [[1, invitationKey, PACED_MS], [1, invitationKey, 0], [10, invitationKey, 0], [1, strangerKey, 0]] as const;
    for (const [concurrency, to, gap] of rowsToRun) {
      const envelopes = Array.from({ length: ENVELOPES[concurrency]! }, () => ping(to));
      const cpu0 = pids.map(processCpuMs);
      const t0 = performance.now();
      const times = sortNum(
        await pool(envelopes.length, concurrency, async (i) => {
          if (gap && i > 0) await sleep(gap);
          const t = performance.now();
          await post(envelopes[i]!);
          return performance.now() - t;
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const cpu = pids.reduce((a, p, i) => a + processCpuMs(p) - cpu0[i]!, 0) / envelopes.length;
      const pace = gap ? `1, one every ${gap} ms` : String(concurrency);
      rows.push(`| ${to === invitationKey ? 'an invitation key' : 'no key of the wallet'} | ${pace} | ${envelopes.length} | ${gap ? '—' : (envelopes.length / seconds).toFixed(0)} | ${pct(times, 50).toFixed(1)} | ${pct(times, 99).toFixed(1)} | ${cpu.toFixed(1)} |`);
      await quiet(pids); // the worker's backlog, before the next row
    }
    console.log(`Envelope: an anoncrypted trust ping to an invitation key, ${ping().length} bytes. Runtime CPU: our Node process and DynamoDB Local's JVM, including the inbound worker handling what was accepted while the row ran (and, paced, the pollers over the gaps).\n`);
    console.log('| addressed to | concurrent senders | envelopes | accepted/s | p50 ms | p99 ms | runtime CPU ms per envelope |');
    console.log('|---|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);

    // 2. The round trip: Credo A with our wallet, and Credo A with Credo B.
    const wallet = await newWallet('bench-didcomm-round-trip');
    const ourInv = await call('POST', '/api/v1/invitations', wallet.key, { alias: 'credo' });
    const { connectionId: aToUs } = await credoA.receiveInvitationUrl(ourInv.invitation_url);
    await credoA.waitForConnection((c) => c.id === aToUs, 60_000);
    const contactId = (
      await until(
        'our connection active',
        async () => ((await call('GET', '/api/v1/connections', wallet.key)) as any[]).find((c) => c.invitation_id === ourInv.invitation_id && c.state === 'active'),
        100,
      )
    ).connection_id as string;
    const bInv = await credoB.createInvitation();
    const { connectionId: aToB } = await credoA.receiveInvitationUrl(bInv.invitationUrl);
    await credoA.waitForConnection((c) => c.id === aToB, 60_000);
    const bToA = (await credoB.waitForConnection((c) => c.outOfBandId === bInv.outOfBandId, 60_000)).id;

    const viaUs = async (tag: string) => {
      const t0 = performance.now();
      await credoA.sendBasicMessage(aToUs, `ping ${tag}`);
      await until('the message listed', async () => ((await call('GET', '/api/v1/messages', wallet.key)) as any[]).find((m) => m.message === `ping ${tag}` && m.direction === 'received'), POLL_MS);
      const t1 = performance.now();
      const back = credoA.waitForBasicMessage((c) => c === `pong ${tag}`, 60_000);
      await call('POST', '/api/v1/messages', wallet.key, { contact_id: contactId, message: `pong ${tag}` });
      await back;
      const t2 = performance.now();
      return [t2 - t0, t1 - t0, t2 - t1] as const;
    };
    const viaCredo = async (tag: string) => {
      const t0 = performance.now();
      const got = credoB.waitForBasicMessage((c) => c === `ping ${tag}`, 60_000);
      await credoA.sendBasicMessage(aToB, `ping ${tag}`);
      await got;
      const t1 = performance.now();
      const back = credoA.waitForBasicMessage((c) => c === `pong ${tag}`, 60_000);
      await credoB.sendBasicMessage(bToA, `pong ${tag}`);
      await back;
      const t2 = performance.now();
      return [t2 - t0, t1 - t0, t2 - t1] as const;
    };
    for (let i = 0; i < 3; i++) {
      await viaUs(`warm ${i}`);
      await viaCredo(`warm ${i}`);
    }
    await quiet(pids);
    const results = { us: [[], [], []] as number[][], credo: [[], [], []] as number[][] };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['us', 'credo'] as const) : (['credo', 'us'] as const);
      for (const side of order) {
        const legs = side === 'us' ? await viaUs(`${r}`) : await viaCredo(`${r}`);
        legs.forEach((x, k) => results[side][k]!.push(x));
      }
    }
    const cell = (xs: number[]) => {
      const s = sortNum(xs);
      return `${pct(s, 50).toFixed(0)} / ${pct(s, 99).toFixed(0)}`;
    };
    console.log(`\nRound trip, ${ROUNDS} rounds each, alternated; ms p50 / p99. Our side polls GET /api/v1/messages every ${POLL_MS} ms; Credo B reacts to its agent's event.\n`);
    console.log('| Credo A with | round trip | A → other: listed (ours) / received (Credo B) | reply → A has it |');
    console.log('|---|---|---|---|');
    console.log(`| our wallet (local runtime, its workers) | ${cell(results.us[0]!)} | ${cell(results.us[1]!)} | ${cell(results.us[2]!)} |`);
    console.log(`| Credo B (same process as A) | ${cell(results.credo[0]!)} | ${cell(results.credo[1]!)} | ${cell(results.credo[2]!)} |`);
    console.log(`\nLoad average at end: ${loadAverage()}.`);
  } finally {
    await Promise.allSettled([credoA.stop(), credoB.stop()]);
    await stopOurs(ours);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
