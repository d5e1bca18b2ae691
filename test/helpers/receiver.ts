import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
  /** When the exchange ended: the answer sent, or the sender gone (its timeout); unset while open. */
  endedAt?: number;
}

/** Answers for a path: a fixed status, or a sequence (the last one repeats), or a status after a delay. */
export type Behaviour = number | readonly number[] | { readonly status: number; readonly delayMs: number };

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
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const seen = requests.filter((r) => r.path === path).length;
      const record: ReceivedRequest = { path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      requests.push(record);
      res.on('close', () => (record.endedAt = Date.now()));
      const b = behaviours.get(path) ?? 200;
      const status = typeof b === 'number' ? b : 'delayMs' in b ? b.status : (b[Math.min(seen, b.length - 1)] ?? 200);
      const answer = () => {
        if (res.destroyed) return;
        if (status >= 300 && status < 400) res.setHeader('location', `${path}-moved`);
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(`status ${status}`);
      };
      if (typeof b === 'object' && 'delayMs' in b) {
        const t = setTimeout(() => {
          timers.delete(t);
          answer();
        }, b.delayMs);
        timers.add(t);
      } else answer();
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
      for (const t of timers) clearTimeout(t);
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
