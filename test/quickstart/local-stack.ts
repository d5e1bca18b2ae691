import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The repository root (where `npm start` runs and the README is). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface StartedStack {
  /** BASE_URL and BASE_API_KEY as the banner's `export` line prints them (the key: null after the first start). */
  readonly baseUrl: string;
  readonly baseApiKey: string | null;
  readonly mailViewerUrl: string;
  /** Everything `npm start` printed so far. */
  output(): string;
  /** Stops the stack (SIGTERM to its process group, SIGKILL after 20 s) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Environment for `npm start` on top of this process's (PORT, MAIL_VIEWER_PORT, LOCAL_DATA_DIR, …). */
  readonly env: Record<string, string>;
  /** How long to wait for the banner (default 180 s: DynamoDB Local's JVM is slow on a loaded machine). */
  readonly timeoutMs?: number;
}

/**
 * Runs `npm start` as a newcomer does and reads what it prints: the banner's mail viewer line and its
 * `export BASE_URL=… BASE_API_KEY=…` line. The stack runs in its own process group, so stopping it
 * also stops DynamoDB Local's JVM even if the runtime could not shut down cleanly.
 */
export async function startStack(opts: StackOptions): Promise<StartedStack> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  delete env.BASE_API_KEY; // the banner prints the generated one
  const child = spawn('npm', ['start'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const group = -child.pid!;
    try {
      process.kill(group, 'SIGTERM');
    } catch {
      return; // already gone
    }
    const timer = setTimeout(() => {
      try {
        process.kill(group, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }, 20_000);
    await exited;
    clearTimeout(timer);
    // The runtime's own children (DynamoDB Local) share the group; make sure none outlives it.
    try {
      process.kill(group, 'SIGKILL');
    } catch {
      // none left
    }
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  while (!/Ctrl-C stops everything/.test(out)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited before its banner:\n${out}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`npm start printed no banner within ${opts.timeoutMs ?? 180_000} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const parsed = parseBanner(out);
  if (!parsed) {
    await stop();
    throw new Error(`the banner lacks the export line or the mail viewer:\n${out}`);
  }
  return { ...parsed, output: () => out, stop };
}

/** The banner's `export BASE_URL=… BASE_API_KEY=…` line and mail viewer URL; null if either is missing. */
export function parseBanner(out: string): Pick<StartedStack, 'baseUrl' | 'baseApiKey' | 'mailViewerUrl'> | null {
  const exported = /^\s*export BASE_URL=(\S+) BASE_API_KEY=(.+)$/m.exec(out);
  const mail = /Mail viewer \(SES\):\s+(\S+)/.exec(out);
  if (!exported || !mail) return null;
  const key = exported[2]!.trim();
  return { baseUrl: exported[1]!, baseApiKey: key.startsWith('<') ? null : key, mailViewerUrl: mail[1]! };
}
