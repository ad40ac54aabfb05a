export * from './model';
export { typeSchema, allTypeSchemas, schemaForKind, packageKey, jsonFields, goTypeName } from './registry';
export * from './semantics';
export * from './decode';
export * from './defaults';
export * from './omit-empty';
export * from './walker';
