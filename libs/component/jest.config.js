module.exports = { ...require('../../jest.preset.js'), displayName: 'component', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
