module.exports = { ...require('../../jest.preset.js'), displayName: 'metrics-server', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
