import type { JSONSchemaProps } from './custom/json-schema';
import type { WebhookConversion } from './types/generated/apiextensions-v1';

/** A lowercase API verb (SPEC "API verbs"). */
export type Verb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'deletecollection'
  | 'proxy';

export type Scope = 'Namespaced' | 'Cluster';

export interface GroupVersion {
  /** '' for the core group. */
  group: string;
  version: string;
}

export interface GroupVersionKind extends GroupVersion {
  kind: string;
}

/** A subresource of a resource (`pods/status`, `deployments/scale`, ...). */
export interface SubresourceDef {
  name: string;
  /** The kind the subresource accepts and returns; group/version default to the parent's. */
  kind: string;
  group?: string;
  version?: string;
  verbs: Verb[];
  /**
   * The answer is a stream, not an API object (upstream connecters: exec, attach, portforward,
   * proxy; and the log streamer): its content type is its own, and Accept only chooses how an
   * error is encoded.
   */
  stream?: true;
}

/**
 * One group/version/resource of the catalog. Everything that lists resources
 * (discovery, routing, storage keys, OpenAPI, runtime-config) is derived from these.
 */
export interface ResourceDef {
  group: string;
  version: string;
  /** Plural lowercase name used in URLs. */
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  shortNames: string[];
  scope: Scope;
  verbs: Verb[];
  subresources: SubresourceDef[];
  categories: string[];
  /** Beta/alpha versions introduced after 1.22 are off until `--runtime-config` enables them. */
  enabledByDefault: boolean;
  /**
   * Virtual types (reviews, bindings) are never stored: create runs an operation
   * and returns its result.
   */
  virtual: boolean;
  /**
   * Another version (or group) this resource's objects are stored as, shared with it
   * (upstream: events.k8s.io Events are core Events; autoscaling/v1 and v2 are one
   * HorizontalPodAutoscaler). Reads and writes convert (`convertObject`); absent: stored as
   * itself.
   */
  storage?: StorageRef;
  /** Set for custom resources: the CustomResourceDefinition they are served from. */
  custom?: CustomResourceInfo;
  /**
   * Set for resources of an aggregated API: the APIService whose extension server serves them
   * (requests are proxied there; the catalog entry is for discovery).
   */
  aggregated?: string;
  /**
   * Set for built-in versions still served after their deprecation (upstream
   * prerelease-lifecycle): requests get a `Warning` header and count in
   * apiserver_requested_deprecated_apis.
   */
  deprecation?: ApiDeprecation;
}

/** When a built-in version was deprecated, when it stops being served and what replaces it (releases as `1.19`). */
export interface ApiDeprecation {
  deprecatedIn: string;
  removedIn?: string;
  replacement?: GroupVersionKind;
}

/** Where a resource's objects are stored: the group/resource and the version (kind) of the stored form. */
export interface StorageRef extends GroupVersionKind {
  resource: string;
}

/** A CRD version's additional printer column (a Table column of its custom resources). */
export interface PrinterColumn {
  name: string;
  /** integer, number, string, boolean or date. */
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  /** JSONPath into the object (`.spec.replicas`). */
  jsonPath: string;
}

/** A CustomResourceDefinition's spec.conversion (the API type, its strategy narrowed to the two there are). */
export interface CustomResourceConversion {
  strategy: 'None' | 'Webhook';
  webhook?: WebhookConversion;
}

/**
 * What the catalog keeps of the CustomResourceDefinition a custom resource comes from: the
 * served version's structural schema (the one schema source of its kind: field validation,
 * pruning, defaulting, validation, OpenAPI, server-side apply) and how it is served.
 */
export interface CustomResourceInfo {
  crdName: string;
  /** A CRD deleted and created again is another definition. */
  crdUid: string;
  crdGeneration: number;
  /** The version's openAPIV3Schema (structural, validated when the CRD was written). */
  schema: JSONSchemaProps;
  /** Every version of the CRD (served or not), for conversion. */
  versions: string[];
  storageVersion: string;
  conversion: CustomResourceConversion;
  printerColumns: PrinterColumn[];
  /** JSONPaths usable in field selectors beside metadata.name and metadata.namespace. */
  selectableFields: string[];
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  deprecated: boolean;
  deprecationWarning?: string;
  /** The CRD is being deleted: no new objects (create is refused). */
  terminating: boolean;
}
