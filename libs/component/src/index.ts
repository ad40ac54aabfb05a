export * from './component';
export { testComponentContext } from './testing';
