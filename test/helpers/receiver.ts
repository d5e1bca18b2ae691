import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

/** Answers for a path: a fixed status, or a sequence (the last one repeats). */
export type Behaviour = number | readonly number[];

/** A webhook receiver on loopback that records every request and answers as told per path. */
export interface Receiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  on(path: string, behaviour: Behaviour): void;
  received(path: string): ReceivedRequest[];
  /** Waits until `path` has received `count` requests (or fails after `timeoutMs`). */
  waitFor(path: string, count?: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const seen = requests.filter((r) => r.path === path).length;
      requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const b = behaviours.get(path) ?? 200;
      const status = typeof b === 'number' ? b : (b[Math.min(seen, b.length - 1)] ?? 200);
      if (status >= 300 && status < 400) res.setHeader('location', `${path}-moved`);
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(`status ${status}`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const received = (path: string) => requests.filter((r) => r.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (path, behaviour) => behaviours.set(path, behaviour),
    received,
    async waitFor(path, count = 1, timeoutMs = 15000) {
      const deadline = Date.now() + timeoutMs;
      while (received(path).length < count) {
        if (Date.now() > deadline) throw new Error(`${path}: ${received(path).length} of ${count} requests within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return received(path);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Polls `check` until it returns a value (not undefined) or the time runs out. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
