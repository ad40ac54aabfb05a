import type { KubeObject, ListMeta, ObjectMeta } from './meta';

// The Table representation (`Accept: application/json;as=Table;g=meta.orch.io;v=v1`)
// and upstream's default table convertor.

export interface TableColumnDefinition {
  name: string;
  /** OpenAPI type: string, integer, number, boolean, date. */
  type: string;
  /** OpenAPI format hint; `name` marks the primary key column. */
  format: string;
  description: string;
  /** 0 shows by default; higher values only in wide output. */
  priority: number;
}

export interface TableRowCondition {
  /** `Completed` marks rows of finished objects. */
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

export interface TableRow {
  /** One cell per column definition. */
  cells: unknown[];
  conditions?: TableRowCondition[];
  /** PartialObjectMetadata, the full object, or absent, per includeObject. */
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: string;
  metadata: ObjectMeta;
}

/** What rows[].object carries (query parameter includeObject; Metadata by default). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  /** Group of the Table's apiVersion, as the client asked: `meta.orch.io` or `meta.k8s.io`. */
  apiGroup: string;
  /** `v1` (default) or `v1beta1`. */
  version?: string;
  /** Metadata of the list the rows come from (resourceVersion, continue, remainingItemCount). */
  listMeta?: ListMeta;
  includeObject?: IncludeObject;
  /** Leave out column definitions (TableOptions.noHeaders; watch events after the first). */
  noHeaders?: boolean;
}

/** How a kind renders as a table: its columns and the cells of one object. */
export interface TableColumns {
  columns: TableColumnDefinition[];
  cells(obj: KubeObject): unknown[];
}

/** upstream's zero metav1.Time formatted as RFC 3339, shown for objects without a timestamp. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The SPEC default table: Name (string, format name) and Created At (date). */
export const DEFAULT_TABLE_COLUMNS: TableColumns = {
  columns: [
    {
      name: 'Name',
      type: 'string',
      format: 'name',
      description: 'The name of the object.',
      priority: 0,
    },
    {
      name: 'Created At',
      type: 'date',
      format: '',
      description: 'When the object was created (RFC 3339, UTC).',
      priority: 0,
    },
  ],
  cells: (obj) => [obj.metadata.name ?? '', obj.metadata.creationTimestamp ?? ZERO_TIME],
};

/** The PartialObjectMetadata of an object, in the Table's group and version. */
export function partialObjectMetadata(obj: KubeObject, apiGroup: string, version = 'v1'): PartialObjectMetadata {
  return { kind: 'PartialObjectMetadata', apiVersion: `${apiGroup}/${version}`, metadata: { ...obj.metadata } };
}

/**
 * A Table of `items` with the given columns (upstream asTable): one row per item whose
 * object is per `includeObject`; list metadata copied. Does not modify the items.
 */
export function buildTable(items: readonly KubeObject[], columns: TableColumns, opts: TableOptions): Table {
  const version = opts.version ?? 'v1';
  const include = opts.includeObject ?? 'Metadata';
  const metadata: ListMeta = {};
  const lm = opts.listMeta;
  if (lm?.resourceVersion) metadata.resourceVersion = lm.resourceVersion;
  if (lm?.continue) metadata.continue = lm.continue;
  if (lm?.remainingItemCount !== undefined) metadata.remainingItemCount = lm.remainingItemCount;
  return {
    kind: 'Table',
    apiVersion: `${opts.apiGroup}/${version}`,
    metadata,
    columnDefinitions: opts.noHeaders ? [] : columns.columns.map((c) => ({ ...c })),
    rows: items.map((obj) => {
      const row: TableRow = { cells: columns.cells(obj) };
      if (include === 'Metadata') row.object = partialObjectMetadata(obj, opts.apiGroup, version);
      else if (include === 'Object') row.object = obj;
      return row;
    }),
  };
}

/** The default table (Name, Created At) of `items`. */
export function defaultTable(items: readonly KubeObject[], opts: TableOptions): Table {
  return buildTable(items, DEFAULT_TABLE_COLUMNS, opts);
}
