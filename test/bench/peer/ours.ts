/**
 * Our side of the side-by-side bench (issuance-peer.ts starts it as a child process, so that its CPU
 * is its own): the local runtime `npm start` runs, as the other benches start it (harness.ts).
 * Tells the parent `{ url, baseApiKey }` over IPC when ready. With `--precomputed-primes` the AnonCreds
 * worker makes definitions from the test key's safe primes (a bench that does not time definitions).
 */
import { startBenchRuntime } from '../harness';

async function main() {
  const primes = process.argv.includes('--precomputed-primes') ? (await import('../../helpers/anoncreds-registry')).precomputedPrimesGenerator() : undefined;
  const { rt } = await startBenchRuntime(primes ? { anoncredsKeyGenerator: primes } : {});
  process.send!({ url: rt.url, baseApiKey: rt.baseApiKey });
  process.on('disconnect', () => {
    void rt.stop().finally(() => process.exit(0));
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
