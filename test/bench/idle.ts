/**
 * Part of `npm run bench` (see run.ts; `BENCH_ONLY=idle`): what `npm start` costs with no traffic.
 * Starts `npm start` on a free port with its data in a fresh temporary folder, waits until it
 * answers and a further settling time, then reads the CPU of its whole process tree (npm, tsx, the
 * runtime's Node process, DynamoDB Local's JVM) from /proc over BENCH_IDLE_SECONDS (default 60).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../infra/local/emulators';
import { processCpuMs, processTree } from '../helpers/processes';
import { loadAverage } from './stats';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const SETTLE_SECONDS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-idle-'));
  // Its own process group: npm does not pass a signal on to the runtime, the group gets it.
  const child = spawn('npm', ['start'], { env: { ...process.env, PORT: String(port), LOCAL_DATA_DIR: dataDir }, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  try {
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error('npm start did not answer within 180 s');
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode})`);
      const up = await fetch(`http://127.0.0.1:${port}/.well-known/did.json`).then(() => true, () => false);
      if (up) break;
      await sleep(500);
    }
    await sleep(SETTLE_SECONDS * 1000);
    const procs = processTree(child.pid!);
    const before = procs.map((p) => processCpuMs(p.pid));
    const t0 = Date.now();
    await sleep(SECONDS * 1000);
    const after = procs.map((p) => {
      try {
        return processCpuMs(p.pid);
      } catch {
        return NaN;
      }
    });
    const seconds = (Date.now() - t0) / 1000;
    const byComm = new Map<string, number>();
    procs.forEach((p, i) => byComm.set(p.comm, (byComm.get(p.comm) ?? 0) + (after[i]! - before[i]!)));
    const total = [...byComm.values()].reduce((a, b) => a + b, 0);
    console.log('\n### Idle `npm start`: CPU with no traffic\n');
    console.log(`${seconds.toFixed(0)} s after a ${SETTLE_SECONDS} s settling time, no requests; CPU of the whole process tree from /proc (10 ms ticks). Load average at the end: ${loadAverage()}.\n`);
    console.log('| process | CPU ms | ms per s | % of one core |');
    console.log('|---|---|---|---|');
    for (const [comm, ms] of byComm) console.log(`| ${comm} | ${ms} | ${(ms / seconds).toFixed(1)} | ${((ms / seconds) / 10).toFixed(2)} % |`);
    console.log(`| **total** | ${total} | ${(total / seconds).toFixed(1)} | ${((total / seconds) / 10).toFixed(2)} % |`);
  } finally {
    const exited = new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
