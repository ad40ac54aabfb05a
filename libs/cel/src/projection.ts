// The parts of a variable's value an expression can read: converting only those (instead of a
// whole object with its managed fields, timestamps and status) is most of what it costs to give
// an admission expression its `object`.

import { surfaceChildren } from './program';
import type { AstNode } from './cost';

/**
 * What of a value is read: `true` the whole value, or per field what of that field is read
 * (fields not named are never read).
 */
export type Projection = true | ReadonlyMap<string, Projection>;

/**
 * What `expression` (its syntax tree) can read of variable `name`: a chain of field selections
 * from it (`object.metadata.labels`, `object.?spec.?replicas`, also inside `has()`) reads the
 * whole value at the end of the chain; the variable used any other way (indexed, passed to a
 * function, compared, iterated) reads all of it. Undefined when it is not used.
 */
export function readsOf(root: AstNode, name: string): Projection | undefined {
  let out: Projection | undefined;
  const visit = (node: AstNode): void => {
    if (node.op === 'id') {
      if (node.args === name) out = true;
      return;
    }
    if (node.op === '.' || node.op === '.?') {
      const path: string[] = [];
      let n: AstNode = node;
      while (n.op === '.' || n.op === '.?') {
        path.unshift(n.args[1] as string);
        n = n.args[0] as AstNode;
      }
      if (n.op === 'id' && n.args === name) {
        out = merge(out, chain(path));
        return;
      }
      visit(n);
      return;
    }
    for (const c of surfaceChildren(node)) visit(c);
  };
  visit(root);
  return out;
}

function chain(path: readonly string[]): Projection {
  let p: Projection = true;
  for (let i = path.length - 1; i >= 0; i--) p = new Map([[path[i], p]]);
  return p;
}

/** What either projection reads. */
export function merge(a: Projection | undefined, b: Projection | undefined): Projection | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a === true || b === true) return true;
  const out = new Map(a);
  for (const [k, v] of b) out.set(k, merge(out.get(k), v)!);
  return out;
}

/**
 * The part of a JSON value a projection reads: objects keep only the named fields (recursively);
 * a value read whole, and anything that is not an object where fields are named, is kept as is.
 * Shares subtrees with `value`.
 */
export function project(value: unknown, projection: Projection): unknown {
  if (projection === true || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, p] of projection) {
    if (Object.hasOwn(value, k)) out[k] = project((value as Record<string, unknown>)[k], p);
  }
  return out;
}
