import { fork, type ChildProcess } from 'node:child_process';
import { env } from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

/** Our local runtime in its own child process (peer/ours.ts), as the DIDComm and issuance benches run it. */
export interface OursProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly baseApiKey: string;
}

export function startOurs(opts: { args?: string[]; execArgv?: string[] } = {}): Promise<OursProcess> {
  const child = fork(new URL('./ours.ts', import.meta.url).pathname, opts.args ?? [], {
    execArgv: ['--import', 'tsx', '--no-deprecation', ...(opts.execArgv ?? [])],
    env: { ...env, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (msg: any) => resolve({ child, url: msg.url, baseApiKey: msg.baseApiKey }));
    child.once('exit', (code) => reject(new Error(`peer/ours.ts exited (${code}) before it was ready`)));
  });
}

/** Asks it to stop (it stops its emulators) and waits until it has. */
export async function stopOurs(ours: OursProcess): Promise<void> {
  ours.child.disconnect();
  await new Promise((r) => (ours.child.exitCode !== null ? r(null) : ours.child.once('exit', r)));
}

/** Polls `read` until it answers something, or throws after `timeoutMs`. */
export async function until<T>(what: string, read: () => Promise<T | undefined>, intervalMs: number, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}
