module.exports = { ...require('../../jest.preset.js'), displayName: 'server-common', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
