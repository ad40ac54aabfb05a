module.exports = { ...require('../../jest.preset.js'), displayName: 'apimachinery', rootDir: __dirname, testMatch: ['<rootDir>/src/**/*.spec.ts'] };
