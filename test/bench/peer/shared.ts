/** What both issuers of the side-by-side bench serve, and how it reads a process's CPU. */
import { processes } from '../../helpers/processes';

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
/** Direct children of `pid` whose command is `comm` (e.g. the DynamoDB Local JVM our runtime starts). */
export function childPids(pid: number, comm: string): number[] {
  return processes().filter((p) => p.ppid === pid && p.comm === comm).map((p) => p.pid);
}
