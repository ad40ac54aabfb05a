// Quantity library (SPEC "Validation expressions": isQuantity, quantity; members isInteger,
// asInteger, asApproximateFloat, sign, add, sub, isLessThan, isGreaterThan, compareTo; upstream
// apiserver/pkg/cel/library/quantity.go) on the repository's quantity parser.

import { Quantity } from '@orch/apimachinery';
import { evalError, type Environment } from '../engine';

const sync = { async: false };
const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

/** A quantity value of expressions (type `orch.Quantity`). */
export class CelQuantity {
  constructor(readonly q: Quantity) {}

  equals(other: CelQuantity): boolean {
    return this.q.equal(other.q);
  }

  toString(): string {
    return this.q.toString();
  }
}

function parse(s: string): Quantity | undefined {
  try {
    return Quantity.parse(s);
  } catch {
    return undefined;
  }
}

export function quantity(s: string): CelQuantity {
  const q = parse(s);
  if (!q || s.trim() !== s) throw evalError(`quantity(${JSON.stringify(s)}): invalid quantity`);
  return new CelQuantity(q);
}

export function isQuantity(s: string): boolean {
  return s.trim() === s && parse(s) !== undefined;
}

function toInt64(q: Quantity): bigint | undefined {
  const v = q.asInt64();
  return v !== undefined && v <= MAX_INT64 && v >= MIN_INT64 ? v : undefined;
}

export function isInteger(c: CelQuantity): boolean {
  return toInt64(c.q) !== undefined;
}

export function asInteger(c: CelQuantity): bigint {
  const v = toInt64(c.q);
  if (v === undefined) throw evalError(`cannot convert value to integer: ${c.q.toString()} is not representable as a 64-bit integer`);
  return v;
}

function operand(x: CelQuantity | bigint): Quantity {
  return typeof x === 'bigint' ? Quantity.fromValue(x) : x.q;
}

export function registerQuantity(env: Environment): void {
  env.registerType('orch.Quantity', CelQuantity);
  env.registerFunction('quantity(string): orch.Quantity', quantity, sync);
  env.registerFunction('isQuantity(string): bool', isQuantity, sync);
  env.registerFunction('orch.Quantity.isInteger(): bool', isInteger, sync);
  env.registerFunction('orch.Quantity.asInteger(): int', asInteger, sync);
  env.registerFunction('orch.Quantity.asApproximateFloat(): double', (c: CelQuantity) => c.q.asApproximateFloat(), sync);
  env.registerFunction('orch.Quantity.sign(): int', (c: CelQuantity) => BigInt(c.q.sign()), sync);
  env.registerFunction('orch.Quantity.add(orch.Quantity): orch.Quantity', (a: CelQuantity, b: CelQuantity) => new CelQuantity(a.q.add(operand(b))), sync);
  env.registerFunction('orch.Quantity.add(int): orch.Quantity', (a: CelQuantity, b: bigint) => new CelQuantity(a.q.add(operand(b))), sync);
  env.registerFunction('orch.Quantity.sub(orch.Quantity): orch.Quantity', (a: CelQuantity, b: CelQuantity) => new CelQuantity(a.q.sub(operand(b))), sync);
  env.registerFunction('orch.Quantity.sub(int): orch.Quantity', (a: CelQuantity, b: bigint) => new CelQuantity(a.q.sub(operand(b))), sync);
  env.registerFunction('orch.Quantity.isLessThan(orch.Quantity): bool', (a: CelQuantity, b: CelQuantity) => a.q.cmp(b.q) < 0, sync);
  env.registerFunction('orch.Quantity.isGreaterThan(orch.Quantity): bool', (a: CelQuantity, b: CelQuantity) => a.q.cmp(b.q) > 0, sync);
  env.registerFunction('orch.Quantity.compareTo(orch.Quantity): int', (a: CelQuantity, b: CelQuantity) => BigInt(a.q.cmp(b.q)), sync);
  env.registerOperator('orch.Quantity == orch.Quantity', (a: CelQuantity, b: CelQuantity) => a.equals(b));
}
