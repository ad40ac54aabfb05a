module.exports = { ...require('../../jest.preset.js'), displayName: 'network-proxy', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
