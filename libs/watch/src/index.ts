export * from './watch-cache';
