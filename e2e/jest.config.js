// Multi-process end-to-end suites: they run the built apps from dist/ (npm test builds first).
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'e2e',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.e2e.spec.ts'],
  setupFilesAfterEnv: ['<rootDir>/support/jest-setup.ts'],
};
