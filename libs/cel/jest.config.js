module.exports = { ...require('../../jest.preset.js'), displayName: 'cel', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
