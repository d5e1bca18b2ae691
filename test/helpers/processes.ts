/** Linux process facts from /proc, for tests and benches that watch the processes they start. */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The command name (`comm`), e.g. `java` for DynamoDB Local's JVM. */
  comm: string;
}

/** The fields of /proc/<pid>/stat after the command name, which is in parentheses and may hold spaces or ')'. */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Every process now running. */
export function processes(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      out.push({ pid: Number(entry), ppid: Number(statFields(stat)[1]), comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** `root` and every process below it, parents before children. */
export function processTree(root: number): ProcessInfo[] {
  const all = processes();
  const tree: ProcessInfo[] = [all.find((p) => p.pid === root) ?? { pid: root, ppid: 0, comm: '?' }];
  for (let i = 0; i < tree.length; i++) for (const p of all) if (p.ppid === tree[i]!.pid) tree.push(p);
  return tree;
}

const TICK_MS = 10;

/** User + system CPU of a process so far, in ms (utime and stime of /proc/<pid>/stat; 10 ms resolution). */
export function processCpuMs(pid: number): number {
  const fields = statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
