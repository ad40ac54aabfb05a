const preset = require('../../jest.preset.js');

// jose 6 ships ES modules only: let swc compile it to CommonJS for jest.
module.exports = {
  ...preset,
  displayName: 'node-agent',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  transform: { ...preset.transform, '^.+/node_modules/jose/.+\\.js$': preset.transform['^.+\\.ts$'] },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
};
