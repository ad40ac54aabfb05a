// The CEL conformance data published on the npm registry (@bufbuild/cel-spec, from
// google/cel-spec) run against this library's engine. Prints, per section, the tests run,
// passed and failed, and the sections skipped with the reason they do not apply to the
// expression language of SPEC "Validation expressions" (no protocol-buffer message types, no
// extension libraries the SPEC does not list).
//
// The test fails when a section outside KNOWN_FAILING fails, or when a section in KNOWN_FAILING
// starts passing (so the list stays true). Run with CEL_CONFORMANCE_DETAIL=<n> to print up to n
// failures per section.

import { toJson } from '@bufbuild/protobuf';
import { SimpleTestSchema } from '@bufbuild/cel-spec/cel/expr/conformance/test/simple_pb.js';
import { getTestRegistry } from '@bufbuild/cel-spec/testdata/registry.js';
import { getConformanceSuite } from '@bufbuild/cel-spec/testdata/tests.js';
import { makeDuration, Optional, UintClass } from './engine';
import { CelEnvironment } from './environment';
import type { CelProgram } from './program';
import { durationNanosOf } from './schema';

const registry = getTestRegistry();

/** Files and sections that do not apply, with the reason. */
const NOT_APPLICABLE: Readonly<Record<string, string>> = {
  proto2: 'protocol-buffer message types (expressions here see JSON objects only)',
  proto3: 'protocol-buffer message types',
  proto2_ext: 'protocol-buffer extensions',
  enums: 'protocol-buffer enums',
  wrappers: 'protocol-buffer wrapper types',
  dynamic: 'protocol-buffer well-known value types inside messages',
  'comparisons/eq_wrapper': 'protocol-buffer wrapper types',
  'type_deductions/field_access': 'protocol-buffer message fields',
  'type_deductions/wrappers': 'protocol-buffer wrapper types',
  'type_deductions/legacy_nullable_types': 'protocol-buffer message types',
  'type_deductions/complex_initializers': 'protocol-buffer message literals',
  'parse/struct_field_names': 'protocol-buffer message literals',
  'fields/qualified_identifier_resolution': 'qualified names resolved against a container of message types',
  'fields/quoted_map_fields': 'backquoted field names (a later language version; SPEC escapes names instead)',
  namespace: 'containers (namespaced identifiers)',
  block_ext: 'cel.block extension (not in SPEC)',
  encoders_ext: 'base64 encoders extension (not in SPEC)',
  math_ext: 'math extension (not in SPEC)',
  macros2: 'two-variable comprehensions (a later language version)',
  unknowns: 'unknown values (partial evaluation) are not part of SPEC',
};

/**
 * Tests that do not apply inside an applicable section, with the reason: the reason is
 * printed with the count of tests it skipped.
 */
function testNotApplicable(t: Json): string | undefined {
  if (t.disableCheck) return 'unchecked evaluation (every SPEC expression is type-checked before it runs)';
  if (t.container || /[A-Za-z_][\w.]*\s*\{/.test(t.expr) && /\b(TestAllTypes|NestedMessage|google\.protobuf\.[A-Z])/.test(t.expr)) return 'protocol-buffer message literals or containers';
  if (/\bTestAllTypes\b|cel\.expr\.conformance|google\.protobuf\.(?!Timestamp|Duration)/.test(t.expr)) return 'protocol-buffer message types';
  if ((t.typeEnv ?? []).some((d: Json) => d.function || d.ident?.type?.messageType)) return 'declarations of message types or functions without implementations';
  return undefined;
}

/**
 * Sections that apply but fail, each with the engine limitation that makes it fail. Empty since
 * the engine fixes in patches/@marcbachmann+cel-js+8.0.0.patch (literals, has(), optional
 * entries, map literal keys, open type parameters) and nanosecond timestamps (timestamps.ts).
 */
const KNOWN_FAILING: Readonly<Record<string, string>> = {};

interface Json {
  [k: string]: any;
}

/** Canonical text of an expected cel.expr.Value (JSON form). */
function canonExpected(v: Json): string {
  if ('nullValue' in v) return 'null';
  if ('boolValue' in v) return `bool(${v.boolValue})`;
  if ('int64Value' in v) return `int(${v.int64Value})`;
  if ('uint64Value' in v) return `uint(${v.uint64Value})`;
  if ('doubleValue' in v) {
    const d = Number(v.doubleValue);
    return `double(${Object.is(d, -0) ? 0 : d})`;
  }
  if ('stringValue' in v) return `string(${JSON.stringify(v.stringValue)})`;
  if ('bytesValue' in v) return `bytes(${Buffer.from(v.bytesValue, 'base64').toString('hex')})`;
  if ('listValue' in v) return `list[${(v.listValue.values ?? []).map(canonExpected).join(',')}]`;
  if ('mapValue' in v) return `map{${(v.mapValue.entries ?? []).map((e: Json) => `${canonExpected(e.key)}:${canonExpected(e.value)}`).sort().join(',')}}`;
  if ('typeValue' in v) return `type(${v.typeValue})`;
  if ('objectValue' in v) {
    const o = v.objectValue;
    const t = String(o['@type']).split('/').pop();
    if (t === 'google.protobuf.Duration') return `duration(${durationNanosOf(String(o.value))})`;
    if (t === 'google.protobuf.Timestamp') return `timestamp(${new Date(o.value).toISOString()})`;
    return `object(${t})`;
  }
  return `unsupported(${JSON.stringify(v)})`;
}

function canonActual(r: unknown): string {
  if (r === null || r === undefined) return 'null';
  switch (typeof r) {
    case 'boolean':
      return `bool(${r})`;
    case 'bigint':
      return `int(${r})`;
    case 'number':
      return `double(${Object.is(r, -0) ? 0 : r})`;
    case 'string':
      return `string(${JSON.stringify(r)})`;
  }
  if (r instanceof UintClass) return `uint(${r.value})`;
  if (r instanceof Uint8Array) return `bytes(${Buffer.from(r).toString('hex')})`;
  if (Array.isArray(r) || r instanceof Set) return `list[${[...r].map(canonActual).join(',')}]`;
  if (r instanceof Map) return `map{${[...r].map(([k, v]) => `${canonActual(k)}:${canonActual(v)}`).sort().join(',')}}`;
  if (r instanceof Date) return `timestamp(${r.toISOString()})`;
  if (r instanceof Optional) return `optional(${r.hasValue() ? canonActual(r.value()) : ''})`;
  const ctor = (r as object).constructor?.name;
  if (ctor === 'Duration') {
    const d = r as { seconds: bigint; nanos: number };
    return `duration(${d.seconds * 1_000_000_000n + BigInt(d.nanos)})`;
  }
  // The engine names the null type `null`; the language calls it `null_type`.
  if (ctor === 'Type') return `type(${(r as { name: string }).name === 'null' ? 'null_type' : (r as { name: string }).name})`;
  if (typeof r === 'object') return `map{${Object.entries(r as object).map(([k, v]) => `string(${JSON.stringify(k)}):${canonActual(v)}`).sort().join(',')}}`;
  return `unsupported(${String(r)})`;
}

class Unsupported extends Error {}

function typeString(t: Json | undefined): string {
  if (!t) return 'dyn';
  if (t.primitive) return ({ INT64: 'int', UINT64: 'uint', DOUBLE: 'double', STRING: 'string', BYTES: 'bytes', BOOL: 'bool' } as Record<string, string>)[t.primitive];
  if (t.listType) return `list<${typeString(t.listType.elemType)}>`;
  if (t.mapType) return `map<${typeString(t.mapType.keyType)}, ${typeString(t.mapType.valueType)}>`;
  if (t.wellKnown) return ({ TIMESTAMP: 'google.protobuf.Timestamp', DURATION: 'google.protobuf.Duration', ANY: 'dyn' } as Record<string, string>)[t.wellKnown];
  if ('null' in t) return 'null';
  if (t.abstractType?.name === 'optional_type') return `optional<${typeString(t.abstractType.parameterTypes?.[0])}>`;
  if ('dyn' in t || t.wrapper) return 'dyn';
  if (t.type) return 'type';
  throw new Unsupported(`type ${JSON.stringify(t)}`);
}

function toValue(v: Json): unknown {
  if ('nullValue' in v) return null;
  if ('boolValue' in v) return v.boolValue;
  if ('int64Value' in v) return BigInt(v.int64Value);
  if ('uint64Value' in v) return new UintClass(BigInt(v.uint64Value));
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('stringValue' in v) return v.stringValue;
  if ('bytesValue' in v) return new Uint8Array(Buffer.from(v.bytesValue, 'base64'));
  if ('listValue' in v) return (v.listValue.values ?? []).map(toValue);
  if ('mapValue' in v) return new Map((v.mapValue.entries ?? []).map((e: Json) => [toValue(e.key), toValue(e.value)]));
  if ('objectValue' in v) {
    const t = String(v.objectValue['@type']).split('/').pop();
    if (t === 'google.protobuf.Timestamp') return new Date(v.objectValue.value);
    if (t === 'google.protobuf.Duration') return makeDuration(durationNanosOf(String(v.objectValue.value)) ?? 0n);
  }
  throw new Unsupported(`value ${JSON.stringify(v)}`);
}

/** The canonical value of one evaluation, or `ERROR: <first line of the message>`. */
function outcomeOf(evaluate: () => unknown): string {
  try {
    const result = evaluate() as { value: unknown };
    if (result instanceof Promise) throw new Error('unexpected async result');
    return canonActual(result.value);
  } catch (e) {
    if (e instanceof Unsupported) throw e;
    return `ERROR: ${(e as Error).message.split('\n')[0]}`;
  }
}

/**
 * Runs one test, counted and untracked (the untracked path evaluates by the compiled form where
 * it applies, compiled.ts): both must give the same outcome. Returns undefined when the test
 * passes, else what went wrong.
 */
function runTest(t: Json): string | undefined {
  const want = t.value ? canonExpected(t.value) : t.typedResult?.result ? canonExpected(t.typedResult.result) : t.evalError || t.anyEvalErrors ? 'ERROR' : 'bool(true)';
  let outcomes: { counted: string; untracked: string };
  try {
    const variables = (t.typeEnv ?? []).filter((d: Json) => d.ident).map((d: Json) => ({ name: d.name, type: typeString(d.ident.type) }));
    const env = new CelEnvironment({ variables, heterogeneousLiterals: true, undeclaredAreDyn: !!t.disableCheck || !t.typeEnv });
    const activation: Record<string, unknown> = {};
    for (const [k, v] of Object.entries((t.bindings ?? {}) as Record<string, Json>)) activation[k] = toValue(v.value);
    outcomes = evaluateBothWays(() => env.compile(t.expr), activation);
  } catch (e) {
    if (e instanceof Unsupported) return `unsupported ${e.message}`;
    throw e;
  }
  const { counted, untracked } = outcomes;
  if (untracked !== counted) return `untracked evaluation gave ${untracked}, counted ${counted}`;
  if (counted.startsWith('ERROR')) return want === 'ERROR' ? undefined : `want ${want}, got error: ${counted.slice('ERROR: '.length)}`;
  return counted === want ? undefined : `want ${want}, got ${counted}`;
}

/** The outcomes of a program evaluated counted and untracked; a compile error is the outcome of both. */
function evaluateBothWays(compile: () => CelProgram, activation: Record<string, unknown>): { counted: string; untracked: string } {
  let program: CelProgram;
  try {
    program = compile();
  } catch (e) {
    const error = `ERROR: ${(e as Error).message.split('\n')[0]}`;
    return { counted: error, untracked: error };
  }
  return { counted: outcomeOf(() => program.evaluate(activation)), untracked: outcomeOf(() => program.evaluate(activation, { untracked: true })) };
}

interface SectionResult {
  name: string;
  run: number;
  passed: number;
  failures: string[];
  skipped?: string;
  /** Tests skipped inside the section, by reason. */
  skippedTests: Map<string, number>;
}

function runSuite(): SectionResult[] {
  const out: SectionResult[] = [];
  for (const file of getConformanceSuite().suites) {
    for (const section of file.suites) {
      const name = `${file.name}/${section.name}`;
      const skip = NOT_APPLICABLE[name] ?? NOT_APPLICABLE[file.name];
      const r: SectionResult = { name, run: 0, passed: 0, failures: [], skipped: skip, skippedTests: new Map() };
      if (!skip) {
        for (const test of section.tests) {
          const t = toJson(SimpleTestSchema, test.original, { registry }) as Json;
          if (t.checkOnly || t.unknown) continue;
          const reason = testNotApplicable(t);
          if (reason) {
            r.skippedTests.set(reason, (r.skippedTests.get(reason) ?? 0) + 1);
            continue;
          }
          r.run++;
          const failure = runTest(t);
          if (failure === undefined) r.passed++;
          else r.failures.push(`${test.name} [${t.expr}]: ${failure}`);
        }
      }
      out.push(r);
    }
  }
  return out;
}

describe('CEL conformance (@bufbuild/cel-spec)', () => {
  const results = runSuite();
  const applicable = results.filter((r) => !r.skipped && r.run > 0);
  const passing = applicable.filter((r) => r.failures.length === 0);

  afterAll(() => {
    const skippedTests = new Map<string, number>();
    for (const r of results) for (const [reason, n] of r.skippedTests) skippedTests.set(reason, (skippedTests.get(reason) ?? 0) + n);
    const lines = [
      `sections: ${results.length} total, ${applicable.length} applicable, ${passing.length} passed, ${applicable.length - passing.length} failed, ${results.length - applicable.length} skipped`,
      `tests in applicable sections: ${applicable.reduce((a, r) => a + r.run, 0)} run, ${applicable.reduce((a, r) => a + r.passed, 0)} passed`,
      ...applicable
        .filter((r) => r.failures.length)
        .map((r) => `  FAILED ${r.name} ${r.passed}/${r.run} (${KNOWN_FAILING[r.name] ?? 'unexpected'})${process.env.CEL_CONFORMANCE_DETAIL ? ': ' + r.failures.slice(0, Number(process.env.CEL_CONFORMANCE_DETAIL)).join(' | ') : ''}`),
      ...[...skippedTests].map(([reason, n]) => `  skipped ${n} tests in applicable sections: ${reason}`),
      ...[...new Set(results.filter((r) => r.skipped).map((r) => `  skipped ${r.name.split('/')[0]}${NOT_APPLICABLE[r.name] ? '/' + r.name.split('/')[1] : ''}: ${r.skipped}`))],
    ];
    console.log(lines.join('\n'));
  });

  it.each(applicable.map((r) => [r.name, r] as const))('%s', (name, r) => {
    if (KNOWN_FAILING[name]) expect(r.failures.length).toBeGreaterThan(0);
    else expect(r.failures).toEqual([]);
  });

  it('fails only the sections listed as known failures, with their reasons', () => {
    const failing = applicable.filter((r) => r.failures.length).map((r) => r.name);
    expect(failing.sort()).toEqual(Object.keys(KNOWN_FAILING).sort());
  });
});
