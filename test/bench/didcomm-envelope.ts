/**
 * Part of `npm run bench` (BENCH_ONLY=didcomm-envelope): DIDComm v1 pack/unpack (authcrypt and
 * anoncrypt, one recipient, a basic message) with lib/didcomm/envelope.ts next to libsodium-wrappers
 * (test/helpers/sodium-envelope.ts) in the same process; and the minified esbuild bundle of the
 * envelope module alone, next to libsodium-wrappers'. One core, sequential.
 */
import { build } from 'esbuild';
import { performance } from 'node:perf_hooks';
import { packMessage, unpackMessage } from '../../lib/didcomm/envelope';
import { sodiumKeyPair, sodiumPack, sodiumReady, sodiumUnpack } from '../helpers/sodium-envelope';

const DURATION_MS = (Number(process.env.BENCH_SECONDS ?? '10') * 1000) / 8;

function perOp(fn: () => unknown): number {
  for (let i = 0; i < 50; i++) fn(); // warm-up
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < DURATION_MS) {
    fn();
    n++;
  }
  return ((performance.now() - t0) / n) * 1000; // µs per operation
}

async function bundleKiB(contents: string): Promise<number> {
  const r = await build({ stdin: { contents, resolveDir: process.cwd(), loader: 'ts' }, bundle: true, minify: true, platform: 'node', format: 'esm', write: false, logLevel: 'silent' });
  return r.outputFiles[0]!.contents.length / 1024;
}

async function main() {
  await sodiumReady();
  const message = { '@type': 'https://didcomm.org/basicmessage/1.0/message', '@id': '6d3c1a5e-4f5b-4bd0-9d4e-3b8b2f1c9a10', content: 'x'.repeat(200), sent_time: new Date().toISOString() };
  const sender = sodiumKeyPair();
  const recipient = sodiumKeyPair();
  const oursSender = { publicKey: sender.publicKey, seed: sender.seed };
  const oursRecipient = { publicKey: recipient.publicKey, seed: recipient.seed };
  console.log('\n### DIDComm v1 envelopes (one recipient, a basic message; µs per operation, one core)\n');
  console.log('| operation | ours (node:crypto, @noble/ciphers) | libsodium-wrappers |');
  console.log('|---|---:|---:|');
  for (const mode of ['authcrypt', 'anoncrypt'] as const) {
    const ourSender = mode === 'authcrypt' ? oursSender : undefined;
    const sodSender = mode === 'authcrypt' ? sender : undefined;
    const ourPacked = packMessage(message, [recipient.verkey], ourSender);
    const sodPacked = sodiumPack(message, [recipient.verkey], sodSender);
    const packOurs = perOp(() => packMessage(message, [recipient.verkey], ourSender));
    const packSodium = perOp(() => sodiumPack(message, [recipient.verkey], sodSender));
    const unpackOurs = perOp(() => unpackMessage(sodPacked, oursRecipient));
    const unpackSodium = perOp(() => sodiumUnpack(ourPacked, recipient));
    console.log(`| ${mode} pack | ${packOurs.toFixed(0)} | ${packSodium.toFixed(0)} |`);
    console.log(`| ${mode} unpack | ${unpackOurs.toFixed(0)} | ${unpackSodium.toFixed(0)} |`);
  }
  const ours = await bundleKiB(`export * from './lib/didcomm/envelope';`);
  const sodium = await bundleKiB(`export { default } from 'libsodium-wrappers';`);
  console.log(`\nBundle (esbuild, minified, ESM, node): lib/didcomm/envelope.ts ${ours.toFixed(1)} KiB; libsodium-wrappers alone ${sodium.toFixed(1)} KiB.`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
