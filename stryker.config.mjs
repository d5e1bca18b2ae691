// StrykerJS for one group of test/mutation/groups.mjs (MUTATION_GROUP); test/mutation/run.mjs runs them.
// Jest as `npm test` runs it (ESM: --experimental-vm-modules, @swc/jest), the unit project's settings
// with only the group's test files.
import jestConfig from './jest.config.js';
import { MUTATION_GROUPS } from './test/mutation/groups.mjs';

const group = MUTATION_GROUPS.find((g) => g.name === process.env.MUTATION_GROUP);
if (!group) throw new Error(`MUTATION_GROUP must be one of: ${MUTATION_GROUPS.map((g) => g.name).join(', ')}`);
const { displayName: _name, testMatch: _match, ...unit } = jestConfig.projects.find((p) => p.displayName === 'unit');
const out = `reports/mutation/${group.name}`;

export default {
  testRunner: 'jest',
  testRunnerNodeArgs: ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning'],
  jest: {
    projectType: 'custom',
    config: { ...unit, testMatch: group.tests.map((t) => `<rootDir>/${t}`), testTimeout: jestConfig.testTimeout },
    enableFindRelatedTests: false,
  },
  checkers: ['typescript'],
  // The checker compiles lib/ only (what is mutated and what it imports); `npm run typecheck` covers the rest.
  tsconfigFile: 'tsconfig.mutation.json',
  mutate: group.mutate,
  coverageAnalysis: 'perTest',
  // Static mutants (module-level values such as the address block list) run every test of the group: kept.
  ignoreStatic: false,
  incremental: true,
  incrementalFile: `${out}/incremental.json`,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: `${out}/mutation.json` },
  htmlReporter: { fileName: `${out}/mutation.html` },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  // The machine is shared: two test processes at most.
  concurrency: 2,
  timeoutMS: 5000,
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['reports', '.local-data', 'cdk.out', 'coverage', 'test/integration', 'test/infra', 'test/bench'],
  thresholds: { high: 90, low: 80, break: null },
};
