// `npm run mutation [-- group...]`: StrykerJS over each group of groups.mjs in turn (all when none is
// named), then one line per mutated file: killed / (killed + survived + no coverage + timeout), as
// docs/testing.md records it. Incremental: a re-run tests only the mutants whose code or tests changed.
// Arguments starting with `--` go to every group's `stryker run` (`--force`: re-test every mutant; a value
// as `--mutate=<file>:<from>-<to>`).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { MUTATION_GROUPS } from './groups.mjs';

const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith('--'));
const names = args.filter((a) => !a.startsWith('--'));
const unknown = names.filter((n) => !MUTATION_GROUPS.some((g) => g.name === n));
if (unknown.length > 0) {
  console.error(`unknown group(s) ${unknown.join(', ')}; groups: ${MUTATION_GROUPS.map((g) => g.name).join(', ')}`);
  process.exit(2);
}
const groups = names.length > 0 ? MUTATION_GROUPS.filter((g) => names.includes(g.name)) : MUTATION_GROUPS;
let failed = false;
const rows = [];
for (const group of groups) {
  console.log(`\n=== ${group.name}: ${group.what}`);
  const run = spawnSync(process.execPath, ['node_modules/@stryker-mutator/core/bin/stryker.js', 'run', 'stryker.config.mjs', ...flags], {
    stdio: 'inherit',
    env: { ...process.env, MUTATION_GROUP: group.name },
  });
  if (run.status !== 0) {
    failed = true;
    continue;
  }
  const report = `reports/mutation/${group.name}/mutation.json`;
  if (!existsSync(report)) continue;
  for (const [file, { mutants }] of Object.entries(JSON.parse(readFileSync(report, 'utf8')).files)) {
    const count = (...states) => mutants.filter((m) => states.includes(m.status)).length;
    const killed = count('Killed', 'Timeout');
    const counted = killed + count('Survived', 'NoCoverage');
    rows.push({ group: group.name, file, killed, survived: count('Survived'), noCoverage: count('NoCoverage'), score: counted ? `${((100 * killed) / counted).toFixed(1)} %` : '-' });
  }
}
console.log('');
console.table(rows);
process.exit(failed ? 1 : 0);
