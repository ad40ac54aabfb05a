module.exports = { ...require('../../jest.preset.js'), displayName: 'watch', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
