/** What both issuers of the side-by-side bench serve, and how it reads a process's CPU. */
import { readdirSync, readFileSync } from 'node:fs';

export const BENCH_CONFIGURATION_ID = 'Identity';
export const BENCH_VCT = 'https://example.com/identity';
export const BENCH_SUBJECT = { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10', nationality: 'GB', address: { street: 'St James Sq 12', locality: 'London', country: 'GB' } };
/** Our admin API's declaration of the same claims and disclosures (credo-issuer.ts has Credo's). */
export const BENCH_CLAIMS = {
  given_name: { mandatory: true, value_type: 'string' },
  family_name: { mandatory: true, value_type: 'string' },
  birthdate: { value_type: 'date' },
  nationality: { value_type: 'string' },
  address: { street: { value_type: 'string' }, locality: { value_type: 'string' }, country: { value_type: 'string' } },
};
export const BENCH_SD_LIST = ['/given_name', '/family_name', '/birthdate', '/address/street'];

// Linux reports utime/stime in clock ticks; 100 per second on every kernel config Node runs on here.
const TICK_MS = 10;

/** User + system CPU of a process so far, in ms (from /proc/<pid>/stat; 10 ms resolution). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** Direct children of `pid` whose command is `comm` (e.g. the DynamoDB Local JVM our runtime starts). */
export function childPids(pid: number, comm: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && name === comm) out.push(Number(d));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}
