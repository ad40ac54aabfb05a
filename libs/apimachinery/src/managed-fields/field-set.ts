// Field paths and sets of them (upstream sigs.k8s.io/structured-merge-diff fieldpath), with
// their FieldsV1 encoding. A path element is kept in its FieldsV1 spelling, which is
// canonical: `f:<name>` (struct field or map key), `k:{"name":"c"}` (list-map item, keys
// sorted), `v:"x"` (set item), `i:3` (list index).

/** A path element in its canonical FieldsV1 spelling. */
export type PathElement = string;
/** A path from the object root. */
export type FieldPath = readonly PathElement[];

export function fieldElement(name: string): PathElement {
  return `f:${name}`;
}

/** A list-map item by its key fields (sorted by name, as upstream). */
export function keyElement(fields: Record<string, unknown>): PathElement {
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(fields).sort()) sorted[k] = fields[k];
  return `k:${JSON.stringify(sorted)}`;
}

/** A set item by its value. */
export function valueElement(value: unknown): PathElement {
  return `v:${JSON.stringify(value)}`;
}

export function indexElement(index: number): PathElement {
  return `i:${index}`;
}

/** Parses a FieldsV1 key into its canonical form; throws on anything else. */
export function parsePathElement(s: string): PathElement {
  const prefix = s.slice(0, 2);
  const body = s.slice(2);
  switch (prefix) {
    case 'f:':
      return s;
    case 'k:': {
      const parsed = parseJson(body, s);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`invalid path element ${JSON.stringify(s)}: key must be an object`);
      return keyElement(parsed as Record<string, unknown>);
    }
    case 'v:':
      return valueElement(parseJson(body, s));
    case 'i:':
      if (!/^(0|[1-9]\d*)$/.test(body)) throw new Error(`invalid path element ${JSON.stringify(s)}: bad index`);
      return s;
    default:
      throw new Error(`invalid path element ${JSON.stringify(s)}: unknown prefix`);
  }
}

function parseJson(text: string, whole: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`invalid path element ${JSON.stringify(whole)}: bad JSON`);
  }
}

/** Upstream's human spelling of one element: `.name`, `[name="c",port=80]`, `[="x"]`, `[3]`. */
function elementString(pe: PathElement): string {
  const body = pe.slice(2);
  switch (pe[0]) {
    case 'f':
      return `.${body}`;
    case 'k': {
      const fields = JSON.parse(body) as Record<string, unknown>;
      return `[${Object.entries(fields)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    }
    case 'v':
      return `[=${body}]`;
    default:
      return `[${body}]`;
  }
}

/** Upstream's human spelling of a path: `.spec.containers[name="c"].image`. */
export function pathString(path: FieldPath): string {
  return path.map(elementString).join('');
}

const TYPE_RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** Element order of upstream serializations: fields, keys, values, indexes. */
function compareElements(a: PathElement, b: PathElement): number {
  if (a[0] !== b[0]) return TYPE_RANK[a[0]] - TYPE_RANK[b[0]];
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A set of field paths, stored as a tree: `members` are the paths that end at this level,
 * `children` the subtrees. A path may be both a member and have children (FieldsV1 `.`).
 * Operations return new sets that may share subtrees with their inputs; only `insert`
 * mutates, so use it only on a set being built.
 */
export class FieldSet {
  private readonly members = new Set<PathElement>();
  private readonly children = new Map<PathElement, FieldSet>();

  static fromPaths(paths: Iterable<FieldPath>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Decodes a FieldsV1 tree (`{"f:data": {".": {}, "f:a": {}}}`); throws on a malformed one. */
  static fromFieldsV1(tree: unknown): FieldSet {
    if (tree === null || typeof tree !== 'object' || Array.isArray(tree)) throw new Error('FieldsV1 must be an object');
    const s = new FieldSet();
    for (const [key, sub] of Object.entries(tree as Record<string, unknown>)) {
      if (key === '.') continue;
      const pe = parsePathElement(key);
      if (sub === null || typeof sub !== 'object' || Array.isArray(sub)) throw new Error(`FieldsV1 entry ${JSON.stringify(key)} must be an object`);
      const entries = Object.keys(sub);
      if (entries.length === 0 || Object.hasOwn(sub, '.')) s.members.add(pe);
      if (entries.some((k) => k !== '.')) {
        const child = FieldSet.fromFieldsV1(sub);
        if (!child.empty()) s.children.set(pe, child);
      }
    }
    return s;
  }

  /** The FieldsV1 tree, elements in upstream order, `.` first where a path is also a parent. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const keys = [...new Set([...this.members, ...this.children.keys()])].sort(compareElements);
    for (const pe of keys) {
      const child = this.children.get(pe);
      if (!child) {
        out[pe] = {};
        continue;
      }
      const sub: Record<string, unknown> = this.members.has(pe) ? { '.': {} } : {};
      Object.assign(sub, child.toFieldsV1());
      out[pe] = sub;
    }
    return out;
  }

  /** Adds a path (mutates this set). The empty path is ignored. */
  insert(path: FieldPath): void {
    if (this === EMPTY) throw new Error('the shared empty FieldSet is immutable');
    if (path.length === 0) return;
    let children = this.children;
    let members = this.members;
    for (let i = 0; i < path.length - 1; i++) {
      let next = children.get(path[i]);
      if (!next) {
        next = new FieldSet();
        children.set(path[i], next);
      }
      children = next.children;
      members = next.members;
    }
    members.add(path[path.length - 1]);
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let children = this.children;
    let members = this.members;
    for (let i = 0; i < path.length - 1; i++) {
      const next: FieldSet | undefined = children.get(path[i]);
      if (!next) return false;
      children = next.children;
      members = next.members;
    }
    return members.has(path[path.length - 1]);
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(pe);
  }

  /** The subtree below `pe` (empty when none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe) ?? EMPTY;
  }

  empty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  union(o: FieldSet): FieldSet {
    if (o.empty()) return this;
    if (this.empty()) return o;
    const s = new FieldSet();
    for (const m of this.members) s.members.add(m);
    for (const m of o.members) s.members.add(m);
    for (const [pe, c] of this.children) s.children.set(pe, c);
    for (const [pe, c] of o.children) {
      const mine = s.children.get(pe);
      s.children.set(pe, mine ? mine.union(c) : c);
    }
    return s;
  }

  /** Paths of this set that are not in `o` (a member of `o` does not remove this set's paths below it). */
  difference(o: FieldSet): FieldSet {
    return this.combine(o, (pe) => !o.members.has(pe), (c, oc) => (oc ? c.difference(oc) : c));
  }

  /** Like difference, but a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.combine(
      o,
      (pe) => !o.members.has(pe),
      (c, oc, pe) => (o.members.has(pe) ? EMPTY : oc ? c.recursiveDifference(oc) : c),
    );
  }

  intersection(o: FieldSet): FieldSet {
    return this.combine(o, (pe) => o.members.has(pe), (c, oc) => (oc ? c.intersection(oc) : EMPTY));
  }

  private combine(o: FieldSet, keepMember: (pe: PathElement) => boolean, child: (c: FieldSet, oc: FieldSet | undefined, pe: PathElement) => FieldSet): FieldSet {
    const s = new FieldSet();
    for (const m of this.members) if (keepMember(m)) s.members.add(m);
    for (const [pe, c] of this.children) {
      const r = child(c, o.children.get(pe), pe);
      if (!r.empty()) s.children.set(pe, r);
    }
    return s;
  }

  /** Every member path, in upstream order. */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (s: FieldSet, prefix: PathElement[]) => {
      const keys = [...new Set([...s.members, ...s.children.keys()])].sort(compareElements);
      for (const pe of keys) {
        if (s.members.has(pe)) out.push([...prefix, pe]);
        const c = s.children.get(pe);
        if (c) walk(c, [...prefix, pe]);
      }
    };
    walk(this, []);
    return out;
  }

  /** A copy in which each element with a subtree becomes a member when `add` holds, subtrees mapped by `childSet`. */
  withMembersAdded(add: (pe: PathElement) => boolean, childSet: (pe: PathElement, c: FieldSet) => FieldSet): FieldSet {
    const s = new FieldSet();
    for (const m of this.members) s.members.add(m);
    for (const [pe, c] of this.children) {
      if (add(pe)) s.members.add(pe);
      const r = childSet(pe, c);
      if (!r.empty()) s.children.set(pe, r);
    }
    return s;
  }
}

const EMPTY = new FieldSet();
