export * from './component';
