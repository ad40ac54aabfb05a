module.exports = { ...require('../../jest.preset.js'), displayName: 'scheduler', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
