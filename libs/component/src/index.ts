export * from './component';
export * from './nest';
export { testComponentContext } from './testing';
