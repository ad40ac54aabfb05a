/** An expression that does not parse or does not type-check; `message` names the problem and position. */
export class CelCompileError extends Error {
  override readonly name = 'CelCompileError';
  constructor(
    message: string,
    /** The expression as written. */
    readonly expression: string,
  ) {
    super(message);
  }
}

/** An expression whose estimated worst-case cost exceeds the budget it is compiled against. */
export class CelCostEstimateError extends CelCompileError {
  constructor(
    expression: string,
    readonly estimatedCost: number,
    readonly budget: number,
  ) {
    super(`estimated rule cost exceeds budget by factor of ${formatFactor(estimatedCost / budget)}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`, expression);
  }
}

/** An evaluation that failed (no such key, overflow, a library function's error...). */
export class CelEvaluationError extends Error {
  override readonly name = 'CelEvaluationError';
  constructor(
    message: string,
    readonly expression: string,
  ) {
    super(message);
  }
}

/** An evaluation halted because its actual cost passed the limit. */
export class CelCostLimitError extends CelEvaluationError {
  constructor(
    expression: string,
    readonly limit: number,
  ) {
    super('operation cancelled: actual cost limit exceeded', expression);
  }
}

function formatFactor(f: number): string {
  if (!Number.isFinite(f)) return 'more than 100x';
  return f >= 100 ? f.toFixed(0) : f.toFixed(1);
}
