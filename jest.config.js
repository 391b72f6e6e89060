// Jest runs the TypeScript sources as native ES modules (NestJS 12 ships ESM only), hence
// `--experimental-vm-modules` in the npm scripts and `useESM` here.
const transform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform,
  testEnvironment: 'node',
  setupFilesAfterEnv: ['<rootDir>/test/jest-preload.ts'],
};

export default {
  // Two files at a time: each test file has databases, queues and ports of its own (test/support), and most of a
  // file's time is spent waiting on the services; one worker (Jest's default on two cores) left the suite at 21 min.
  maxWorkers: 2,
  projects: [
    { ...common, displayName: 'unit', rootDir: '.', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      rootDir: '.',
      testMatch: ['<rootDir>/test/integration/**/*.spec.ts'],
      setupFilesAfterEnv: [...common.setupFilesAfterEnv, '<rootDir>/test/jest-real-services.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      rootDir: '.',
      testMatch: ['<rootDir>/test/e2e/**/*.spec.ts'],
      setupFilesAfterEnv: [...common.setupFilesAfterEnv, '<rootDir>/test/jest-real-services.ts'],
    },
    // The web UI in real headless Chromium (Debian's chromium, driven by playwright-core).
    { ...common, displayName: 'browser', rootDir: '.', testMatch: ['<rootDir>/test/browser/**/*.spec.ts'] },
  ],
};
