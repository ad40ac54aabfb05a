module.exports = { ...require('../../jest.preset.js'), displayName: 'dashboard', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/ui/src/**/*.spec.ts'] };
