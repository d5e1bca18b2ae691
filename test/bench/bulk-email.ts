/**
 * Part of `npm run bench` (see run.ts): bulk email through the local runtime, for docs/benchmarks.md.
 * 1. `POST /api/v1/emails/verify` with 10,000 valid recipients: time until it answers (checked,
 *    recorded, 10,000 jobs queued), median of 3 requests (each a new body).
 * 2. The worker end to end: from the answer of a 500-recipient request until the SES emulator holds
 *    all 500 mails (each: an OID4VCI offer made, a MIME mail with its QR code composed and sent).
 */
import { performance } from 'node:perf_hooks';
import { runBench, startBenchRuntime } from './harness';

const BIG = Number(process.env.BENCH_BULK_RECIPIENTS ?? 10_000);
const E2E = Number(process.env.BENCH_BULK_E2E ?? 500);

async function main() {
  const { rt, call, walletWithPublicDid } = await startBenchRuntime();
  const { key } = await walletWithPublicDid('bench-mailer', { method: 'key' });
  await call('POST', '/api/v1/oid4vci/credentials-supported/sd-jwt', key, { id: 'Membership', vct: 'https://example.com/m', claims: { name: { mandatory: true } }, display: [{ name: 'Membership card' }] });
  const entries = (n: number, run: string) => Array.from({ length: n }, (_, i) => ({ email: `r${i}.${run}@example.org`, schema_id: 'Membership', time_to_accept: 7, attributes: [{ name: 'name', value: `R ${i}` }] }));

  // 2 first (a quiet machine): the worker end to end into the emulator.
  const storeCount = async (run: string) => {
    const res = await fetch(`${rt.mailViewerUrl}/store`);
    const body = (await res.json()) as { emails: { destination: { to: string[] } }[] };
    return body.emails.filter((m) => m.destination.to.some((to) => to.includes(`.${run}@`))).length;
  };
  const t0 = performance.now();
  await call('POST', '/api/v1/emails/verify', key, { emails: entries(E2E, 'e2e') });
  const answered = performance.now();
  while ((await storeCount('e2e')) < E2E) await new Promise((r) => setTimeout(r, 100));
  const done = performance.now();

  // 1: the big requests (the worker mails the earlier ones meanwhile, in the same process).
  const times: number[] = [];
  for (let run = 0; run < 3; run++) {
    const body = { emails: entries(BIG, `big${run}`) };
    const t = performance.now();
    const out = await call('POST', '/api/v1/emails/verify', key, body);
    times.push(performance.now() - t);
    if (out.emailsSuccess.length !== BIG) throw new Error('not all accepted');
  }
  times.sort((a, b) => a - b);
  console.log('\n### Bulk email: POST /api/v1/emails/verify with 10,000 recipients\n');
  console.log(`Time until the answer (every entry checked, ${BIG} jobs on the email queue); three requests, each a new body, while the worker mails the earlier ones in the same process (it shares the 2 cores).\n`);
  console.log('| recipients | min ms | median ms | max ms |');
  console.log('|---|---|---|---|');
  console.log(`| ${BIG} | ${times[0]!.toFixed(0)} | ${times[1]!.toFixed(0)} | ${times[2]!.toFixed(0)} |`);
  console.log('\n### Bulk email: the worker end to end\n');
  console.log(`From sending a ${E2E}-recipient request until the SES emulator holds all ${E2E} mails (each: an OID4VCI offer, a MIME mail with its QR code, SendRawEmail); one worker, batches of 10, on a quiet machine.\n`);
  console.log('| recipients | request answered ms | all mails in ms | mails/s |');
  console.log('|---|---|---|---|');
  console.log(`| ${E2E} | ${(answered - t0).toFixed(0)} | ${(done - t0).toFixed(0)} | ${(E2E / ((done - answered) / 1000)).toFixed(1)} |`);
  await rt.stop();
}

runBench(main);
