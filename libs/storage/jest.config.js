module.exports = { ...require('../../jest.preset.js'), displayName: 'storage', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
