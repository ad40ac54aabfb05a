module.exports = { ...require('../../jest.preset.js'), displayName: 'node-agent', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
