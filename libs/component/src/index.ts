export * from './component';
export * from './nest';
export { startTestComponent, testComponentContext, type TestComponent } from './testing';
