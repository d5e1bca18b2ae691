import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { processTree } from '../helpers/processes';
import { startTestApi, type TestApi } from '../helpers/runtime';

/**
 * Issue 20 §5: the local runtime is loopback-only. Every socket the runtime's process and its children
 * (DynamoDB Local's JVM) listen on, read from the kernel (/proc/net/{tcp,tcp6,udp,udp6}, matched to
 * their processes by socket inode through /proc/<pid>/fd), is bound to a loopback address: nothing on
 * a wildcard (0.0.0.0, ::) or an external address. Linux only (/proc).
 */
let api: TestApi;
beforeAll(async () => {
  // Its own DynamoDB Local: the JVM must be among this runtime's processes to be checked.
  api = await startTestApi({ ownDynamoDb: true });
});
afterAll(async () => {
  await api?.rt.stop();
});

function socketInodes(pids: readonly number[]): Set<string> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  return inodes;
}

/** /proc/net addresses: 32-bit words in host (little-endian) order, then the port in hex. */
function decodeAddress(hex: string): { address: string; port: number } {
  const [addr, port] = hex.split(':') as [string, string];
  const words = addr.match(/.{8}/g)!.map((w) => Buffer.from(w, 'hex').reverse());
  const bytes = Buffer.concat(words);
  if (bytes.length === 4) return { address: [...bytes].join('.'), port: parseInt(port, 16) };
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  return { address: groups.join(':'), port: parseInt(port, 16) };
}

function isLoopback(address: string): boolean {
  if (/^127\./.test(address)) return true;
  if (address === '0:0:0:0:0:0:0:1') return true; // ::1
  const mapped = /^0:0:0:0:0:ffff:([0-9a-f]+):([0-9a-f]+)$/.exec(address); // ::ffff:127.x.y.z
  return mapped !== null && parseInt(mapped[1]!, 16) >> 8 === 127;
}

interface Listener {
  readonly table: string;
  readonly address: string;
  readonly port: number;
}

/** Sockets in LISTEN state (TCP) or bound and unconnected (UDP) among `inodes`. */
function listenersOf(inodes: Set<string>): Listener[] {
  const out: Listener[] = [];
  for (const [table, state] of [['tcp', '0A'], ['tcp6', '0A'], ['udp', '07'], ['udp6', '07']] as const) {
    let text = '';
    try {
      text = readFileSync(`/proc/net/${table}`, 'utf8');
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const line of text.trim().split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] !== state || !inodes.has(f[9]!)) continue;
      out.push({ table, ...decodeAddress(f[1]!) });
    }
  }
  return out;
}

// The kernel's tables are read from /proc: Linux (CI) only.
const onLinux = process.platform === 'linux' ? test : test.skip;

onLinux('everything the local runtime opens listens on loopback only', () => {
  const pids = processTree(process.pid).map((p) => p.pid);
  const listeners = listenersOf(socketInodes(pids));
  const ports = (url: string) => Number(new URL(url).port);
  const expected = [api.rt.url, api.rt.endpoints.dynamodb, api.rt.endpoints.sqs, api.rt.endpoints.ses].map(ports);
  // The gateway, DynamoDB Local (in the JVM, a child process), the SQS emulator and the SES emulator with its mail viewer are all seen…
  expect(pids.length).toBeGreaterThan(1);
  for (const port of expected) expect(listeners.filter((l) => l.port === port).length).toBeGreaterThan(0);
  // …and none of what is listening, theirs or anything else of these processes, is reachable from outside.
  expect(listeners.filter((l) => !isLoopback(l.address))).toEqual([]);
});

test('the address decoder reads what the kernel writes', () => {
  expect(decodeAddress('0100007F:0BB8')).toEqual({ address: '127.0.0.1', port: 3000 });
  expect(decodeAddress('00000000:1F40')).toEqual({ address: '0.0.0.0', port: 8000 });
  expect(decodeAddress('00000000000000000000000001000000:0050')).toEqual({ address: '0:0:0:0:0:0:0:1', port: 80 });
  expect(decodeAddress('00000000000000000000000000000000:1F40').address).toBe('0:0:0:0:0:0:0:0');
  expect(decodeAddress('0000000000000000FFFF00000100007F:0050').address).toBe('0:0:0:0:0:ffff:7f00:1');
  expect(['127.0.0.1', '127.0.0.2', '0:0:0:0:0:0:0:1', '0:0:0:0:0:ffff:7f00:1'].every(isLoopback)).toBe(true);
  expect(['0.0.0.0', '0:0:0:0:0:0:0:0', '192.168.1.2', '0:0:0:0:0:ffff:c0a8:102'].some(isLoopback)).toBe(false);
});
