/**
 * The admin-API calls every bench's setup makes, against a runtime in this process (harness.ts) or a
 * child's (peer/process.ts): a caller that must answer 2xx, and new tenants.
 */
import { LOCAL_TAA } from '../../infra/local/runtime';

export type Call = (method: string, path: string, key: string, body?: unknown) => Promise<any>;

/** An admin or wallet call that must answer 2xx: its JSON body (a setup step, not a measurement). */
export function apiCaller(url: string): Call {
  return async (method, path, key, body) => {
    const res = await fetch(`${url}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
}

export interface BenchTenants {
  /** A new subwallet and an admin key for it. */
  newWallet(name: string): Promise<{ key: string; walletId: string }>;
  /** A new subwallet whose public DID is a new DID of `didBody` (the agreement accepted first, as publishing needs). */
  walletWithPublicDid(name: string, didBody: Record<string, unknown>): Promise<{ key: string; walletId: string; did: string }>;
}

export function benchTenants(call: Call, baseApiKey: string): BenchTenants {
  const newWallet = async (name: string) => {
    const w = await call('POST', '/api/subwallet/create', baseApiKey, { wallet_name: name, label: name });
    const key = (await call('POST', '/api/apikey/create', baseApiKey, { wallet_id: String(w.wallet_id), roles: ['admin'] })).api_key as string;
    return { key, walletId: String(w.wallet_id) };
  };
  const walletWithPublicDid = async (name: string, didBody: Record<string, unknown>) => {
    const w = await newWallet(name);
    await call('POST', '/api/v1/accept-taa', w.key, { mechanism: 'service_agreement', version: LOCAL_TAA.version });
    const did = (await call('POST', '/api/v1/create-did', w.key, didBody)).did.did as string;
    await call('POST', `/api/v1/set-public-did?DID=${encodeURIComponent(did)}`, w.key);
    return { ...w, did };
  };
  return { newWallet, walletWithPublicDid };
}
