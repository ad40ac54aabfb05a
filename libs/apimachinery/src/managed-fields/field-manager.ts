import { FieldError, StatusError, type StatusCause } from '../errors';
import type { KubeObject, ManagedFieldsEntry } from '../meta';
import type { ObjectSchema } from '../schema-walker';
import { FieldSet, fieldElement, pathString, type FieldPath } from './field-set';
import { TypedValueError, addedFields, compareTyped, ensureNamedFieldsAreMembers, jsonEqual, mergeTyped, removeItems, toFieldSet, type Comparison } from './typed';

// Field ownership (SPEC "Apply ownership"; upstream k8s.io/apiserver fieldmanager over
// structured-merge-diff's Updater): metadata.managedFields kept on every write, server-side
// apply with conflicts, force and pruning.

type Operation = 'Apply' | 'Update';

/** One decoded managedFields entry. */
interface ManagedEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

/** Entries by manager identity (manager, operation, subresource and, for updates, apiVersion). */
type Managed = Map<string, ManagedEntry>;

/** kubectl's client-side apply annotation (kubectl writes this key whatever the API's brand). */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The manager `kubectl apply --server-side` uses; its applies keep the client-side annotation in step. */
const KUBECTL_MANAGER = 'kubectl';

/** Manager of the fields an object had before its first apply, when it had no managedFields. */
export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';

/** Longest field manager name (upstream FieldManagerMaxLength). */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** Paths no manager owns: they are the server's (upstream stripMetaManager). */
const STRIPPED = FieldSet.fromPaths(
  [['apiVersion'], ['kind'], ['metadata'], ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => ['metadata', f])].map(
    (p) => p.map(fieldElement),
  ),
);

/** No paths. */
const NONE = new FieldSet();

/** Paths an apply never prunes, whoever owned them. */
const NEVER_PRUNED = STRIPPED.union(FieldSet.fromPaths([['metadata', 'deletionTimestamp'], ['metadata', 'deletionGracePeriodSeconds']].map((p) => p.map(fieldElement))));

/** Who writes, through which subresource, when. */
export interface WriteOptions {
  manager: string;
  /** '' (or absent) for the main resource. */
  subresource?: string;
  /** metav1.Time of this write. */
  now: string;
  /** Paths the write cannot change (upstream reset fields: status through the main resource, ...); never owned. */
  ignored?: FieldSet;
}

export interface ApplyOptions extends WriteOptions {
  /** Take over conflicting fields instead of failing (`force=true`). */
  force: boolean;
}

/** The identity upstream keys entries by (BuildManagerIdentifier): apiVersion only for updates. */
function identity(e: { manager: string; operation: Operation; apiVersion: string; subresource?: string }): string {
  return JSON.stringify({ manager: e.manager, operation: e.operation, ...(e.operation === 'Update' ? { apiVersion: e.apiVersion } : {}), ...(e.subresource ? { subresource: e.subresource } : {}) });
}

/** upstream printManager: `"kubectl"`, `"ctrl" with subresource "status"`, `"kubectl-edit" using v1`. */
function describeManager(e: ManagedEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion}`;
  return s;
}

/** A list of one entry with no content: the SPEC's request to strip managedFields. */
function isReset(list: unknown): boolean {
  if (!Array.isArray(list) || list.length !== 1) return false;
  const e = list[0];
  return e !== null && typeof e === 'object' && !Array.isArray(e) && Object.values(e).every((v) => v === undefined || v === null || v === '');
}

/** Decodes managedFields; throws on a malformed entry. */
export function decodeManagedFields(list: unknown): Managed {
  const out: Managed = new Map();
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new Error('managedFields must be a list');
  list.forEach((raw: ManagedFieldsEntry, i) => {
    if (raw === null || typeof raw !== 'object') throw new Error(`managed fields entry ${i} must be an object`);
    if (raw.operation !== 'Apply' && raw.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (!raw.apiVersion) throw new Error('apiVersion must not be empty');
    if (raw.fieldsType !== 'FieldsV1') throw new Error(raw.fieldsType ? `invalid fieldsType ${JSON.stringify(raw.fieldsType)} in managed fields entry ${i}` : `missing fieldsType in managed fields entry ${i}`);
    const entry: ManagedEntry = {
      manager: raw.manager ?? '',
      operation: raw.operation,
      apiVersion: raw.apiVersion,
      set: FieldSet.fromFieldsV1(raw.fieldsV1 ?? {}),
    };
    if (raw.subresource) entry.subresource = raw.subresource;
    if (raw.time) entry.time = raw.time;
    out.set(identity(entry), entry);
  });
  return out;
}

function decodeOrEmpty(list: unknown): Managed {
  try {
    return decodeManagedFields(list);
  } catch {
    return new Map();
  }
}

/** Encodes entries in upstream order (Apply first, then by time, manager, apiVersion, subresource); none → undefined. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  const entries = [...managed.values()].filter((e) => !e.set.empty());
  if (entries.length === 0) return undefined;
  const seconds = (t?: string) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  entries.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
  return entries.map(encodeEntry);
}

/** One entry as managedFields hold it (upstream's field order). */
function encodeEntry(e: ManagedEntry): ManagedFieldsEntry {
  const out: ManagedFieldsEntry = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion };
  if (e.time) out.time = e.time;
  out.fieldsType = 'FieldsV1';
  out.fieldsV1 = e.set.toFieldsV1();
  if (e.subresource) out.subresource = e.subresource;
  return out;
}

/** Nodes of one CreatedFields trie at most; a walk that would pass them is not remembered, the next one starts a new trie. */
const CREATED_OUTLINE_NODES = 4096;

/** Outline tokens besides object keys: an object begins, an object ends, a value that is no object. */
const OPEN = Symbol('{');
const CLOSE = Symbol('}');
const LEAF = Symbol('.');

/** A node of the outline trie: the node of each next token, and what is remembered for an outline ending here. */
interface OutlineNode {
  next: Map<string | symbol, OutlineNode>;
  /** The writer's fieldsV1, null when the writer owns nothing; absent until remembered. */
  fieldsV1?: Record<string, unknown> | null;
}

/**
 * What FieldManager remembers of creates: a trie over outlines of created objects (their keys
 * at every depth in order, and which values are objects and which are not), which is all a
 * create's field set depends on when no value is a list (a list's path elements depend on its
 * items' values). The keys are object keys themselves (no text is made per create).
 */
class CreatedFields {
  private root: OutlineNode = { next: new Map() };
  private nodes = 0;

  /** The node of `value`'s outline, made as needed; undefined when a value is a list or the trie is full. */
  nodeOf(value: unknown): OutlineNode | undefined {
    if (this.nodes > CREATED_OUTLINE_NODES) {
      this.root = { next: new Map() };
      this.nodes = 0;
    }
    let node = this.root;
    const step = (token: string | symbol): boolean => {
      let n = node.next.get(token);
      if (!n) {
        if (++this.nodes > CREATED_OUTLINE_NODES) return false;
        node.next.set(token, (n = { next: new Map() }));
      }
      node = n;
      return true;
    };
    const walk = (v: unknown): boolean => {
      if (Array.isArray(v)) return false;
      if (v === null || typeof v !== 'object') return step(LEAF);
      if (!step(OPEN)) return false;
      for (const k of Object.keys(v)) if (!step(k) || !walk((v as Record<string, unknown>)[k])) return false;
      return step(CLOSE);
    };
    return walk(value) ? node : undefined;
  }
}

/** A copy of a fieldsV1 value (objects of objects), keys in the same order. */
function copyFieldsV1(v: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = copyFieldsV1(v[k] as Record<string, unknown>);
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The object without metadata.managedFields (shallow copies; the input is not changed). */
function withoutManagedFields(obj: KubeObject | undefined): KubeObject | Record<string, never> {
  if (!obj) return {};
  if (!obj.metadata || obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _m, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** Removes null object members (an applied null means "not set"). */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) Object.defineProperty(out, k, { value: withoutNulls(x), writable: true, enumerable: true, configurable: true });
  return out;
}

function exclude(c: Comparison, ignored: FieldSet | undefined): Comparison {
  if (!ignored || ignored.empty()) return c;
  return { added: c.added.recursiveDifference(ignored), modified: c.modified.recursiveDifference(ignored), removed: c.removed.recursiveDifference(ignored) };
}

/** One field that an apply would take from another manager. */
interface Conflict {
  entry: ManagedEntry;
  path: FieldPath;
}

/** The 409 of an apply with conflicts, worded as upstream (NewConflictError). */
function conflictError(conflicts: Conflict[]): StatusError {
  const sorted = [...conflicts].sort((a, b) => cmp(identity(a.entry), identity(b.entry)));
  let message: string;
  if (sorted.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${describeManager(sorted[0].entry)}: ${pathString(sorted[0].path)}`;
  } else {
    const lines: string[] = [];
    let last: ManagedEntry | undefined;
    for (const c of sorted) {
      if (c.entry !== last) lines.push(`conflicts with ${describeManager(c.entry)}:`);
      last = c.entry;
      lines.push(`- ${pathString(c.path)}`);
    }
    message = `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
  }
  const causes: StatusCause[] = sorted.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c.entry)}`, field: pathString(c.path) }));
  return new StatusError(409, 'Conflict', message, { causes });
}

/**
 * Maintains metadata.managedFields for the objects of one kind. Pure: methods return new
 * values and never change their inputs.
 */
export class FieldManager {
  /** The fieldsV1 of creates by outline of the created object (CreatedFields), per ignored set. */
  private readonly createdFields = new Map<FieldSet | undefined, CreatedFields>();

  constructor(
    private readonly schema: ObjectSchema,
    /** apiVersion of the objects (`v1`, `apps/v1`). */
    private readonly apiVersion: string,
  ) {}

  /**
   * managedFields after a non-apply write (create, update, patch) of `next` over `live`
   * (undefined for a create); undefined when the object carries none. The write starts from
   * the managedFields of `next` when it sets a non-empty valid list (clients may edit them;
   * SPEC: a list with one empty entry resets them first), else from those of `live`. The
   * writer owns what it changed; other managers lose it. Unlike upstream, objects without
   * managedFields are tracked too (SPEC: managedFields are kept on every write).
   */
  update(live: KubeObject | undefined, next: KubeObject, o: WriteOptions): ManagedFieldsEntry[] | undefined {
    const requested = next.metadata?.managedFields;
    let managed: Managed = new Map();
    if (!o.subresource && !isReset(requested)) managed = decodeOrEmpty(requested);
    if (managed.size === 0 && (o.subresource || !isReset(requested))) managed = decodeOrEmpty(live?.metadata?.managedFields);
    if (live === undefined && managed.size === 0) {
      const created = this.createdEntry(next, o);
      if (created !== undefined) return created === null ? undefined : [created];
    }
    return this.walkedUpdate(live, next, o, managed);
  }

  /** update() from the entries `managed` (changed here) by comparing `next` with `live` against the schema. */
  private walkedUpdate(live: KubeObject | undefined, next: KubeObject, o: WriteOptions, managed: Managed): ManagedFieldsEntry[] | undefined {
    let c: Comparison;
    try {
      // A create compares with nothing: every field of next is added (one walk, no comparisons).
      const next1 = withoutManagedFields(next);
      c = exclude(live === undefined ? { added: addedFields(next1, this.schema), modified: NONE, removed: NONE } : compareTyped(withoutManagedFields(live), next1, this.schema), o.ignored);
    } catch (err) {
      // upstream UpdateNoErrors: an object the schema cannot describe loses its managedFields.
      if (err instanceof TypedValueError) return undefined;
      throw err;
    }
    const changed = c.modified.union(c.added);
    for (const [id, e] of managed) {
      e.set = e.set.difference(changed).difference(c.removed);
      if (e.set.empty()) managed.delete(id);
    }
    const own = changed.difference(STRIPPED);
    if (!own.empty()) {
      const entry: ManagedEntry = { manager: o.manager, operation: 'Update', apiVersion: this.apiVersion, time: o.now, set: own };
      if (o.subresource) entry.subresource = o.subresource;
      // The writer's entry alone (a create without managedFields): nothing to merge or sort.
      if (managed.size === 0) return [encodeEntry(entry)];
      const id = identity(entry);
      const previous = managed.get(id);
      if (previous) entry.set = entry.set.union(previous.set);
      managed.set(id, entry);
    }
    return encodeManagedFields(managed);
  }

  /**
   * update() of a create that starts from no managedFields, from the fieldsV1 remembered for
   * objects of the same outline (walked once): the writer's entry, null when it owns nothing,
   * undefined when the object holds a list or the trie is full (update() walks it).
   */
  private createdEntry(next: KubeObject, o: WriteOptions): ManagedFieldsEntry | null | undefined {
    let created = this.createdFields.get(o.ignored);
    if (!created) this.createdFields.set(o.ignored, (created = new CreatedFields()));
    const node = created.nodeOf(withoutManagedFields(next));
    if (node === undefined) return undefined;
    if (node.fieldsV1 === undefined) {
      const entries = this.walkedUpdate(undefined, next, { ...o, manager: '', subresource: '', now: '' }, new Map()) ?? [];
      // Not remembered when the walk gave several entries (it never does for a create from none).
      if (entries.length > 1) return undefined;
      node.fieldsV1 = entries.length === 0 ? null : entries[0].fieldsV1!;
    }
    if (node.fieldsV1 === null) return null;
    const entry: ManagedEntry = { manager: o.manager, operation: 'Update', apiVersion: this.apiVersion, time: o.now, set: NONE };
    if (o.subresource) entry.subresource = o.subresource;
    return { ...encodeEntry(entry), fieldsV1: copyFieldsV1(node.fieldsV1) };
  }

  /**
   * Server-side apply of `config` over `live` (undefined: the object is created). Returns the
   * merged object (not defaulted) carrying its new managedFields. Fields the applier owned
   * and left out are removed unless someone else owns them; a field whose value changes
   * while another manager owns it is a 409 conflict unless `force`, which takes it over.
   * Bad configurations are 400. As upstream, the manager `kubectl` may take over fields its
   * client-side apply annotation still matches, and keeps that annotation (when present) in
   * step with the applied configuration.
   */
  apply(live: KubeObject | undefined, config: KubeObject, o: ApplyOptions): KubeObject {
    if (config.metadata?.managedFields !== undefined) throw StatusError.badRequest('metadata.managedFields must be nil');
    if (config.apiVersion !== this.apiVersion) {
      throw StatusError.badRequest(`Incorrect version specified in apply patch. Specified patch version: ${config.apiVersion ?? ''}, expected: ${this.apiVersion}`);
    }
    const cfg = withoutNulls(config) as KubeObject;
    let configSet: FieldSet;
    try {
      configSet = toFieldSet(cfg, this.schema);
    } catch (err) {
      if (err instanceof TypedValueError) throw StatusError.badRequest(`failed to create typed patch object (${this.apiVersion}, Kind=${config.kind}): ${err.message}`);
      throw err;
    }
    const managed = decodeOrEmpty(live?.metadata?.managedFields);
    const liveObj = withoutManagedFields(live);
    try {
      if (managed.size === 0 && live) {
        // An object without managedFields: its fields so far belong to one Update manager.
        const before = compareTyped({}, liveObj, this.schema);
        const set = exclude(before, o.ignored).added.difference(STRIPPED);
        const entry: ManagedEntry = { manager: BEFORE_FIRST_APPLY_MANAGER, operation: 'Update', apiVersion: this.apiVersion, time: o.now, set };
        managed.set(identity(entry), entry);
      }
      const applier: ManagedEntry = { manager: o.manager, operation: 'Apply', apiVersion: this.apiVersion, set: o.ignored ? configSet.recursiveDifference(o.ignored) : configSet };
      if (o.subresource) applier.subresource = o.subresource;
      const id = identity(applier);
      const previous = managed.get(id);
      managed.set(id, applier);

      // Merged with live's managedFields in place (the config has none), so that key order survives.
      let merged = mergeTyped(live ?? {}, cfg, this.schema) as KubeObject;
      if (previous && !previous.set.empty()) {
        let owned = NEVER_PRUNED;
        for (const e of managed.values()) owned = owned.union(e.set);
        const drop = ensureNamedFieldsAreMembers(previous.set, this.schema).difference(ensureNamedFieldsAreMembers(owned, this.schema));
        merged = removeItems(merged, drop, this.schema) as KubeObject;
      }

      const mergedObj = withoutManagedFields(merged);
      const c = exclude(compareTyped(liveObj, mergedObj, this.schema), o.ignored);
      const changed = c.modified.union(c.added);
      const conflicts: Conflict[] = [];
      for (const [eid, e] of managed) {
        if (eid === id) continue;
        for (const path of e.set.intersection(changed).paths()) conflicts.push({ entry: e, path });
      }
      if (conflicts.length && !o.force) {
        // kubectl taking over from its client-side apply: fields it last applied do not conflict.
        const allowed = o.manager === KUBECTL_MANAGER ? this.lastAppliedFields(live) : undefined;
        const remaining = allowed ? conflicts.filter((x) => !allowed.has(x.path)) : conflicts;
        if (remaining.length) throw conflictError(remaining);
      }
      for (const [eid, e] of managed) {
        if (eid === id) continue;
        e.set = e.set.difference(changed).difference(c.removed);
        if (e.set.empty()) managed.delete(eid);
      }
      applier.set = applier.set.difference(STRIPPED);
      const changedObject = !jsonEqual(liveObj, mergedObj);
      applier.time = changedObject || !previous?.time ? o.now : previous.time;
      const managedFields = encodeManagedFields(managed);
      const metadata = { ...(merged.metadata ?? {}) };
      if (managedFields) metadata.managedFields = managedFields;
      else delete metadata.managedFields;
      if (o.manager === KUBECTL_MANAGER && metadata.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) {
        metadata.annotations = { ...metadata.annotations, [LAST_APPLIED_ANNOTATION]: lastAppliedOf(cfg) };
      }
      return { ...merged, metadata };
    } catch (err) {
      if (err instanceof TypedValueError) throw StatusError.internal(`failed to create typed live object: ${err.message}`);
      throw err;
    }
  }

  /**
   * Fields of the client-side apply annotation whose values the live object still has
   * (upstream lastAppliedManager): kubectl's server-side apply may take them over.
   */
  private lastAppliedFields(live: KubeObject | undefined): FieldSet | undefined {
    const text = live?.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
    if (!text) return undefined;
    try {
      const lastApplied = JSON.parse(text) as KubeObject;
      if (lastApplied?.apiVersion !== this.apiVersion) return undefined;
      const c = compareTyped(lastApplied, withoutManagedFields(live), this.schema);
      return toFieldSet(lastApplied, this.schema).difference(c.modified).difference(c.added).difference(c.removed);
    } catch {
      return undefined;
    }
  }
}

/** Sorted-key JSON, as Go marshals maps. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
    .join(',')}}`;
}

/** The annotation value for an applied configuration (upstream buildLastApplied): the configuration without the annotation. */
function lastAppliedOf(config: KubeObject): string {
  const annotations = { ...(config.metadata?.annotations ?? {}) };
  delete annotations[LAST_APPLIED_ANNOTATION];
  const metadata = { ...(config.metadata ?? {}) };
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  return sortedJson({ ...config, metadata });
}

const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;

/**
 * The default field manager of a request without `fieldManager` (upstream prefixFromUserAgent):
 * the User-Agent up to its first `/`, without unprintable characters, at most 128 bytes.
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  let out = '';
  for (const ch of (userAgent ?? '').split('/')[0]) {
    if (!PRINTABLE.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
  }
  return out;
}

/** Problems of a `fieldManager` parameter (upstream ValidateFieldManager): too long, unprintable characters. */
export function validateFieldManager(name: string, field = 'fieldManager'): FieldError[] {
  const errs: FieldError[] = [];
  if (name.length > FIELD_MANAGER_MAX_LENGTH) errs.push(FieldError.tooLong(field, name, FIELD_MANAGER_MAX_LENGTH));
  let i = 0;
  for (const ch of name) {
    if (!PRINTABLE.test(ch)) {
      const cp = ch.codePointAt(0)!;
      errs.push(FieldError.invalid(field, name, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${i})`));
    }
    i += ch.length;
  }
  return errs;
}
