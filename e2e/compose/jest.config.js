// `npm run test:compose`: docker-compose.yml really running (images built, every service up,
// kubectl through the load balancer). Not part of `npm test`: building the images dominates
// (npm ci and native modules inside the build stage), minutes even with the layer cache.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'compose',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.compose.spec.ts'],
};
