// Custom resources: CustomResourceDefinitions and the structural schemas of their kinds.
export * from './json-schema';
export { pruneUnknownFields } from './prune';
export { applySchemaDefaults, schemaHasDefaults } from './defaults';
export { validateCustomResource } from './validate';
export { checkFormat, SUPPORTED_FORMATS } from './formats';
export { JsonPath, JsonPathError } from './jsonpath';
export { structuralSchemaErrors } from './structural';
export { customObjectSchema, objectSchemaOf } from './walker';
export * from './crd';
