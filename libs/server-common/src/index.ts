export * from './component-server';
export * from './flags';
export * from './health';
export * from './logger';
export * from './metrics';
export * from './http2';
