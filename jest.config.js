// ESM throughout (jose, middy and the Lambda bundles are ESM): Jest runs with
// --experimental-vm-modules and @swc/jest strips types without type-checking
// (`npm run typecheck` does that).
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      // One DynamoDB Local for the run, started only when an integration suite runs (test/helpers/shared-dynamodb.ts).
      globalSetup: '<rootDir>/test/helpers/shared-dynamodb-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/shared-dynamodb-teardown.ts',
    },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
  ],
  testTimeout: 60000,
  // Two suites at once on the 2-core machine (Jest's default is cores − 1): the integration suites wait
  // on emulators and pollers much of the time. The whole suite passed this way at load average 6–7.
  maxWorkers: 2,
};
