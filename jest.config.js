/** @type {import('jest').Config} */
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
};

module.exports = {
  testEnvironment: 'node',
  transform,
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // the browser suite needs Debian's chromium: `npm run test:browser` (jest.browser.config.js)
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/browser/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
  // two suites at a time: most wait on child processes (npm start, moto, the tools), and CI has 20 minutes for all
  // three runs. Jest's default on a 2-core machine is one.
  maxWorkers: 2,
};
