/** @type {import('jest').Config} */
const base = require('./jest.config.js');

/** `npm run test:browser`: the pages in Debian's chromium (`apt-get install -y chromium`), driven by playwright-core. */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
};
