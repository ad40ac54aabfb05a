import type { CustomResourceDefinition } from '@orch/api';
import { StatusError, type FieldError, type KubeObject, type TableColumnDefinition, type TableColumns } from '@orch/apimachinery';
import { deepCopy } from '../object-meta';
import type { ServiceAddresses } from '../service-ip/addresses';
import type { StatusStrategy, Strategy } from '../strategy';

/** Checks of a CRD beyond its shape: its schemas' validation rules compile within the cost budget. */
export type CrdRuleCheck = (crd: CustomResourceDefinition) => FieldError[];

/** What a binding's strategy may depend on besides the objects: gateway options and services, given once at start-up. */
export interface KindDeps {
  /** Compatibility option (--k8s-group-aliases): write the upstream twins of well-known labels. */
  k8sCompatibility: boolean;
  /** Compiles the validation rules of a CRD's schemas (refused when they do not compile or cost too much). */
  crdRuleCheck?: CrdRuleCheck;
  /** Cluster IP and node port allocation (services; required for them). */
  serviceAddresses?: ServiceAddresses;
}

/**
 * The handlers of server/subresources.ts. `part` is none of them: GET, PUT and PATCH of the part
 * of the object the subresource owns, through the generic store.
 */
export type SubresourceHandler = 'scale' | 'podBinding' | 'eviction' | 'token' | 'log' | 'nodeProxy' | 'podProxy' | 'serviceProxy' | 'exec' | 'attach' | 'portforward';

/** How one subresource of a kind is served. */
export interface SubresourceBinding<T extends KubeObject = KubeObject> {
  serve: 'part' | SubresourceHandler;
  /**
   * The part of the object the subresource writes through the generic store (required for
   * `part`; pods/binding writes its node name through it too).
   */
  writes?: StatusStrategy<T>;
}

/** The operations of server/virtual.ts: a create (or, componentstatuses, a read) that stores nothing. */
export type VirtualOperation = 'podBinding' | 'componentStatuses' | 'accessReview' | 'localAccessReview' | 'selfAccessReview' | 'rulesReview' | 'selfSubjectReview' | 'tokenReview';

/** Table columns of a kind, cells read from its typed object. */
export interface KindTable<T extends KubeObject = KubeObject> {
  columns: TableColumnDefinition[];
  cells(obj: T): unknown[];
}

/**
 * Everything the gateway does differently for one built-in resource (all versions of one
 * group/resource), declared in its module `kinds/<group>/<resource>.ts` and listed in
 * `kinds/index.ts`. The gateway resolves each catalog entry's binding once at start-up
 * ({@link resolveKind}); a catalog entry without a binding is a start-up error, and
 * kinds.spec.ts fails on a resource or subresource without a binding and on a binding without
 * a catalog entry. What is left out means "nothing special": the default strategy, no field
 * selectors beyond name and namespace, the SPEC default table.
 */
export interface KindBinding<T extends KubeObject = KubeObject> {
  /** '' for the core group. */
  group: string;
  resource: string;
  /** Stored resources: the strategy, or its factory from the gateway's options and services. */
  strategy?: Strategy<T> | ((deps: KindDeps) => Strategy<T>);
  /** Field-selector attributes beyond metadata.name and metadata.namespace: dotted paths, or a function of the object. */
  fields?: readonly string[] | ((obj: T) => Record<string, string>);
  /** Every subresource the catalog lists for the resource, and how it is served. */
  subresources?: Record<string, SubresourceBinding<T>>;
  table?: KindTable<T>;
  /** Virtual resources (never stored): the operation requests run. */
  virtual?: VirtualOperation;
}

/** The strategy of kinds with nothing special: DNS-subdomain names, PUT never creates. */
export const defaultStrategy: Strategy = {
  nameRule: 'dns1123Subdomain',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** The default strategy, but PUT of an absent object creates it (upstream AllowCreateOnUpdate). */
export const createOnUpdateStrategy: Strategy = { ...defaultStrategy, allowCreateOnUpdate: true };

/** The default strategy with `check` as validation of creates and updates (it must not mutate). */
export function validatedBy<T extends KubeObject>(check: (obj: T) => FieldError[]): Strategy<T> {
  return { ...defaultStrategy, validate: (obj) => check(obj), validateUpdate: (obj) => check(obj) };
}

/** Replaces every field of obj by old's, then restores the fields `keep` lists from obj. */
export function resetExcept<T extends KubeObject>(obj: T, old: T, keep: (incoming: T, reset: T) => void): void {
  const incoming = deepCopy(obj);
  for (const k of Object.keys(obj)) delete (obj as Record<string, unknown>)[k];
  Object.assign(obj, deepCopy(old));
  keep(incoming, obj);
}

/** `status` subresource: only status changes; metadata, spec and the rest stay as they were. */
export const statusSubresource: StatusStrategy = {
  prepareForUpdate(obj, old) {
    resetExcept(obj, old, (incoming, reset) => {
      if (incoming.status === undefined) delete reset.status;
      else reset.status = incoming.status;
    });
  },
};

/** A subresource that writes part of the object through the generic store. */
export function part<T extends KubeObject>(writes: StatusStrategy<T>): SubresourceBinding<T> {
  return { serve: 'part', writes };
}

/** The plain status subresource. */
export const STATUS: SubresourceBinding = part(statusSubresource);

/**
 * A kind whose creates and updates are checked by `check` ({@link validatedBy}) and whose status
 * is written through the plain status subresource: its strategy and subresources.
 */
export function validatedWithStatus<T extends KubeObject>(check: (obj: T) => FieldError[]): Pick<KindBinding<T>, 'strategy' | 'subresources'> {
  return { strategy: validatedBy(check), subresources: { status: STATUS } };
}

/** A subresource answered by a handler of server/subresources.ts. */
export function handled(handler: SubresourceHandler): SubresourceBinding {
  return { serve: handler };
}

/** The autoscaling/v1 Scale subresource (spec.replicas, status.replicas, spec.selector). */
export const SCALE: SubresourceBinding = handled('scale');

/** A table column (`Name` gets the name format). Priority 0 shows by default, 1 only with `-o wide`. */
export function col(name: string, type = 'string', priority = 0, format = ''): TableColumnDefinition {
  return { name, type, format: name === 'Name' ? 'name' : format, description: `${name} of the object.`, priority };
}

/** The value at a dotted path, or undefined. */
export function get(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Field-selector attributes read from the given dotted paths ('' when unset). */
export function fieldsFrom(paths: readonly string[]): (obj: KubeObject) => Record<string, string> {
  return (obj) => {
    const out: Record<string, string> = {};
    for (const p of paths) {
      const v = get(obj, p);
      out[p] = v === undefined || v === null ? '' : String(v);
    }
    return out;
  };
}

/**
 * For the `default` of a switch over a binding's handler names (SubresourceHandler,
 * VirtualOperation): a name without a case is a compile error here, and a 500 should one reach
 * it at run time anyway.
 */
export function unhandled(handler: never): never {
  throw StatusError.internal(`no handler named ${String(handler)}`);
}

/** A binding as the registry uses it: resolved once per catalog entry. */
export interface ResolvedKind {
  strategy: Strategy;
  /** Field-selector attributes beyond metadata.name and metadata.namespace. */
  fieldAttributes?: (obj: KubeObject) => Record<string, string>;
  subresources: Readonly<Record<string, SubresourceBinding>>;
  table?: TableColumns;
  virtual?: VirtualOperation;
}

/** A binding with its strategy built from `deps` and its field paths compiled. */
export function resolveBinding(binding: KindBinding, deps: KindDeps): ResolvedKind {
  const b = binding as KindBinding;
  const strategy = typeof b.strategy === 'function' ? b.strategy(deps) : (b.strategy ?? defaultStrategy);
  const fields = b.fields;
  return {
    strategy,
    ...(fields ? { fieldAttributes: typeof fields === 'function' ? fields : fieldsFrom(fields) } : {}),
    subresources: b.subresources ?? {},
    ...(b.table ? { table: b.table as TableColumns } : {}),
    ...(b.virtual ? { virtual: b.virtual } : {}),
  };
}

/**
 * Declares a kind's binding with the type of its objects (`defineKind<coreV1.Pod>({...})`):
 * hooks, field functions and table cells see a `Served<coreV1.Pod>`.
 */
export function defineKind<T>(binding: KindBinding<T & KubeObject>): KindBinding {
  return binding as KindBinding;
}
