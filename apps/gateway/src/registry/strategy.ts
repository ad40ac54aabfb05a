import type { FieldError, KubeObject, DeleteOptions } from '@orch/apimachinery';

/** Who is asking and how: passed to every strategy hook. */
export interface RequestContext {
  user: { username: string; groups: string[]; uid?: string; extra?: Record<string, string[]> };
  namespace: string;
  dryRun: boolean;
  fieldManager?: string;
  /** Warnings to send back in `Warning` headers. */
  warnings: string[];
  /**
   * A resourceVersion the object must have for the write to proceed (the `If-Match` header):
   * checked against the stored object on every attempt; a mismatch is 409 Conflict.
   */
  ifMatchResourceVersion?: string;
  /** Admission of this request (the pipeline's admit stage); absent for the gateway's own writes. */
  admission?: WriteAdmission;
}

/** upstream admission.Operation. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/**
 * Admission callbacks of one request (upstream passes admit, createValidation and
 * updateValidation into the registry the same way). The generic store calls, per attempt:
 * `mutate` on the incoming object before its strategy hooks (may change it), then after
 * prepare/validate, `validate` right before the write (must not change it). For UPDATE and
 * DELETE `oldObject` is the stored object the write is based on.
 */
export interface WriteAdmission {
  mutate(operation: AdmissionOperation, object: KubeObject | undefined, oldObject: KubeObject | undefined): Promise<void>;
  validate(operation: AdmissionOperation, object: KubeObject | undefined, oldObject: KubeObject | undefined): Promise<void>;
}

/** Name rules (SPEC Object names): which validator applies to metadata.name. */
export type NameRule = 'dns1123Subdomain' | 'dns1123Label' | 'dns1035Label' | 'pathSegment';

/**
 * Served (@orch/api): an object of a generated API type (`coreV1.Pod`) as the registry handles
 * it: apiVersion, kind and metadata are always there. Hooks still check what they rely on: a
 * body may hold anything its schema check let through.
 */
export type { Served } from '@orch/api';

/**
 * Per-kind behaviour of the generic store (STYLE 1-2), typed by the kind's object
 * (`Strategy<Served<coreV1.Pod>>`). Stateless. The generic store calls, in this order:
 * prepareForCreate|prepareForUpdate (may mutate the incoming object), validate|validateUpdate
 * (must not mutate), generic metadata validation, canonicalize (may mutate). Hooks left out
 * mean "nothing special". A kind's strategy is declared by its binding (kinds/).
 */
export interface Strategy<T extends KubeObject = KubeObject> {
  nameRule: NameRule;
  /** PUT of an absent object creates it. */
  allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion overwrites the current object. */
  allowUnconditionalUpdate: boolean;
  /** Clears fields the client may not set on create (usually status). */
  prepareForCreate?(obj: T, ctx: RequestContext): void;
  /** Carries over fields the client may not change (usually status, for the main resource). */
  prepareForUpdate?(obj: T, old: T, ctx: RequestContext): void;
  validate?(obj: T, ctx: RequestContext): FieldError[];
  validateUpdate?(obj: T, old: T, ctx: RequestContext): FieldError[];
  canonicalize?(obj: T): void;
  /**
   * Normalizes every object read from storage (custom resources: pruned to and defaulted from
   * the current schema, so a schema changed later applies to objects written before). May
   * mutate. Leave it out when stored objects read as they are: lists then skip parsing.
   */
  onRead?(obj: T): void;
  /**
   * Normalizes an object read from another stored version, after its conversion (custom
   * resources: pruned to and defaulted from this version's schema). May mutate.
   */
  afterConversion?(obj: T): void;
  /**
   * Graceful deletion: returns the grace period in seconds when deletion should wait
   * (sets deletionTimestamp and leaves the object for its owner, e.g. the node agent), or
   * undefined to delete at once.
   */
  gracePeriodSeconds?(obj: T, options: DeleteOptions): number | undefined;
  /**
   * Finalizers added when deletion is first requested (CRDs: the cleanup finalizer that holds
   * a definition until its custom resources are gone).
   */
  finalizersOnDelete?(obj: T): string[];
  /** Runs before deletion is recorded (e.g. namespace: phase Terminating). May mutate. */
  beforeDelete?(obj: T): void;
  /**
   * Holds a deleting object beyond metadata.finalizers (namespaces: spec.finalizers).
   * The object is removed once nothing holds it.
   */
  holdsDeletion?(obj: T): boolean;
  /**
   * Reserves what the object needs outside itself (services: cluster IP, node ports) and
   * records the values in obj. Runs after validation and canonicalize, right before the
   * write of a create or main-resource update (`old` is the stored object then). With
   * ctx.dryRun it only checks and fills in values, reserving nothing. Throws StatusError
   * when a requested value is unavailable. The generic store then calls exactly one of
   * `commit()` (written) or `revert()` (not written).
   */
  allocate?(obj: T, old: T | undefined, ctx: RequestContext): Promise<StrategyAllocation>;
  /** Frees what allocate reserved for an object now gone from the store. Never throws. */
  release?(obj: T): Promise<void>;
}

/** Reservations of one write, settled by the generic store once the write's outcome is known. */
export interface StrategyAllocation {
  /** The write succeeded: free what the old object held and the new one does not. */
  commit(): Promise<void>;
  /** The write failed or was abandoned: free what was reserved for it. */
  revert(): Promise<void>;
}

/**
 * Hooks of a subresource that writes part of an object (`status`, `finalize`): prepareForUpdate
 * makes `obj` equal to `old` except for the part the subresource owns (may mutate obj);
 * validateUpdate then checks it (must not mutate).
 */
export interface StatusStrategy<T extends KubeObject = KubeObject> {
  prepareForUpdate(obj: T, old: T): void;
  validateUpdate?(obj: T, old: T): FieldError[];
}
