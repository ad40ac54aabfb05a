export * from './catalog-types';
export * from './catalog-data';
export * from './catalog';
export * from './feature-gates';
export * from './schemas';
export * from './protobuf';
export * from './well-known';
