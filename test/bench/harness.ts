/**
 * What the benches share: the local runtime `npm start` runs, on a free port with in-memory data and
 * its throttles, per-source limits and concurrency caps lifted (a bench measures the service, not the
 * limits), an admin-API caller, and the setup of a tenant. Each bench runs as its own process
 * (run.ts), so `runBench` owns the exit code.
 */
import { startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../../infra/local/runtime';
import { apiCaller, benchTenants, type BenchTenants, type Call } from './admin';

const UNTHROTTLED = { rateLimit: 1e9, burstLimit: 1e9 };

export type { Call } from './admin';

export interface BenchRuntime extends BenchTenants {
  readonly rt: LocalRuntime;
  /** An admin or wallet call that must answer 2xx: its JSON body (a setup step, not a measurement). */
  readonly call: Call;
}

export async function startBenchRuntime(extra: Pick<LocalRuntimeOptions, 'anoncredsKeyGenerator'> = {}): Promise<BenchRuntime> {
  const rt = await startLocalRuntime({
    ...extra,
    port: 0,
    dataDir: null,
    logLevel: 'SILENT',
    throttles: { stage: UNTHROTTLED, tenant: UNTHROTTLED, platform: UNTHROTTLED, publicRoute: UNTHROTTLED, protocolRoute: UNTHROTTLED, account: UNTHROTTLED },
    sourceLimits: { allRequests: 1e9, publicRequests: 1e9 }, // one source (127.0.0.1) stands for every client
    reservedConcurrency: {},
  });
  const call = apiCaller(rt.url);
  return { rt, call, ...benchTenants(call, rt.baseApiKey!) };
}

/** Runs a bench's `main` and exits with its outcome (the runtime's pollers would keep the process alive). */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
