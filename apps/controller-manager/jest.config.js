module.exports = { ...require('../../jest.preset.js'), displayName: 'controller-manager', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
