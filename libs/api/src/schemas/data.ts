import type { ListType, MapType, PatchStrategy, ScalarType, StructType } from './model';

/**
 * Compact form of the generated schema data (written by tools/gen-schemas.mjs).
 * Type expressions: a scalar name, `Name` (same package), `pkg:Name`, `[]T` (list), `{}T` (map).
 */
export interface FieldOpts {
  required?: 1;
  inline?: 1;
  /** Enum name, `Name` or `pkg:Name`. */
  e?: string;
  lt?: ListType;
  lk?: string[];
  ps?: PatchStrategy;
  mk?: string;
  mt?: MapType;
  st?: StructType;
  d?: unknown;
  /** Go pointer field. */
  ptr?: 1;
  /** Go JSON tag with `omitempty`. */
  oe?: 1;
}

export type FieldTuple = [name: string, type: string, proto: number, opts?: FieldOpts];

export interface TypeOpts {
  tm?: 1;
  k?: 1;
  st?: StructType;
  union?: 1;
  scalar?: ScalarType;
  items?: string;
}

export type TypeTuple = [name: string, fields: FieldTuple[], opts?: TypeOpts];

export interface PackageData {
  key: string;
  name: string;
  enums: Record<string, string[]>;
  types: TypeTuple[];
}
