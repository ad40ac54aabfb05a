// Shared jest settings: swc transform and the @orch/* path aliases of tsconfig.base.json.
const path = require('path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias.replace('/', '\\/')}$`] = path.join(__dirname, target);
}

const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  // jose 6 and @marcbachmann/cel-js ship ES modules: swc compiles them to CommonJS for jest too.
  transform: { '^.+\\.ts$': swc, '^.+/node_modules/(jose|@marcbachmann/cel-js)/.+\\.js$': swc },
  transformIgnorePatterns: ['/node_modules/(?!(jose|@marcbachmann/cel-js)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
