export { FieldSet, fieldElement, keyElement, valueElement, indexElement, parsePathElement, pathString, type PathElement, type FieldPath } from './field-set';
export { toFieldSet, compareTyped, addedFields, mergeTyped, removeItems, ensureNamedFieldsAreMembers, jsonEqual, TypedValueError, type Comparison } from './typed';
export {
  FieldManager,
  managerFromUserAgent,
  validateFieldManager,
  BEFORE_FIRST_APPLY_MANAGER,
  LAST_APPLIED_ANNOTATION,
  FIELD_MANAGER_MAX_LENGTH,
  type WriteOptions,
  type ApplyOptions,
} from './field-manager';
