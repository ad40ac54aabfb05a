// Validation expressions (SPEC "Validation expressions"): one engine for admission webhooks'
// matchConditions, admission policies and custom resource validation rules.

export { CelEnvironment, type CelVariable, type CelEnvironmentOptions, type CompileOptions } from './environment';
export { CelProgram, type CelActivation, type CelResult, type EvaluateOptions } from './program';
export { CelCompileError, CelCostEstimateError, CelEvaluationError, CelCostLimitError } from './errors';
export { CelValueConverter, MAX_REQUEST_SIZE_BYTES, type CelSchema, type SchemaContext } from './schema';
export { escapePropertyName, unescapePropertyName, CEL_RESERVED_WORDS } from './escaping';
export { COST, PER_CALL_COST_LIMIT, ESTIMATED_COST_LIMIT, RUNTIME_COST_BUDGET } from './cost';
export { celEquals, celToJson, celTypeName } from './values';
export {
  AuthorizerValue,
  type CelAuthorizer,
  type CelAuthorizationAttributes,
  type CelAuthorizationDecision,
  type CelUserInfo,
} from './library/authorizer';
export { JsonPatchLibrary } from './library/jsonpatch';
export { analyseObjectLiterals, type ObjectLiterals } from './object-literals';
export { merge as mergeProjections, project, type Projection } from './projection';
