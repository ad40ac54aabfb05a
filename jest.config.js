// Every project's tests: unit (*.spec.ts), integration (*.int.spec.ts) and e2e (e2e/).
module.exports = {
  projects: ['<rootDir>/libs/*/jest.config.js', '<rootDir>/apps/*/jest.config.js', '<rootDir>/e2e/jest.config.js'],
};
