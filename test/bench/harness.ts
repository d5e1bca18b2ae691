/**
 * What the benches share: the local runtime `npm start` runs, on a free port with in-memory data and
 * its throttles, per-source limits and concurrency caps lifted (a bench measures the service, not the
 * limits), an admin-API caller, and the setup of a tenant. Each bench runs as its own process
 * (run.ts), so `runBench` owns the exit code.
 */
import { LOCAL_TAA, startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../../infra/local/runtime';

const UNTHROTTLED = { rateLimit: 1e9, burstLimit: 1e9 };

export type Call = (method: string, path: string, key: string, body?: unknown) => Promise<any>;

export interface BenchRuntime {
  readonly rt: LocalRuntime;
  /** An admin or wallet call that must answer 2xx: its JSON body (a setup step, not a measurement). */
  readonly call: Call;
  /** A new subwallet and an admin key for it. */
  newWallet(name: string): Promise<{ key: string; walletId: string }>;
  /** A new subwallet whose public DID is a new DID of `didBody` (the agreement accepted first, as publishing needs). */
  walletWithPublicDid(name: string, didBody: Record<string, unknown>): Promise<{ key: string; walletId: string; did: string }>;
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
  const call: Call = async (method, path, key, body) => {
    const res = await fetch(`${rt.url}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const newWallet = async (name: string) => {
    const w = await call('POST', '/api/subwallet/create', rt.baseApiKey!, { wallet_name: name, label: name });
    const key = (await call('POST', '/api/apikey/create', rt.baseApiKey!, { wallet_id: String(w.wallet_id), roles: ['admin'] })).api_key as string;
    return { key, walletId: String(w.wallet_id) };
  };
  const walletWithPublicDid = async (name: string, didBody: Record<string, unknown>) => {
    const w = await newWallet(name);
    await call('POST', '/api/v1/accept-taa', w.key, { mechanism: 'service_agreement', version: LOCAL_TAA.version });
    const did = (await call('POST', '/api/v1/create-did', w.key, didBody)).did.did as string;
    await call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(did)}`, w.key);
    return { ...w, did };
  };
  return { rt, call, newWallet, walletWithPublicDid };
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
