/** Jest runs TypeScript as ESM (middy 6 is ESM-only); the local services are started once by globalSetup. */
export default {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The ESM build imports its metadata JSON without an import attribute, which jest warns about.
    '^libphonenumber-js/(min|max)$': '<rootDir>/node_modules/libphonenumber-js/$1/index.cjs',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true }],
  },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  setupFiles: ['<rootDir>/test/helpers/env.ts'],
  testTimeout: 60000,
};
