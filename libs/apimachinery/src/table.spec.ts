import type { KubeObject } from './meta';
import { DEFAULT_TABLE_COLUMNS, buildTable, defaultTable, type TableOptions } from './table';

const cm = (name: string, ts?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '7', ...(ts ? { creationTimestamp: ts } : {}) },
  data: { k: 'v' },
});

const HEADERS = DEFAULT_TABLE_COLUMNS.columns.map((c) => ({ name: c.name, type: c.type, format: c.format, priority: c.priority }));

describe('defaultTable', () => {
  const items = [cm('a', '2024-01-02T03:04:05Z'), cm('b')];

  it('has the SPEC default columns', () => {
    expect(HEADERS).toEqual([
      { name: 'Name', type: 'string', format: 'name', priority: 0 },
      { name: 'Created At', type: 'date', format: '', priority: 0 },
    ]);
  });

  it.each<{ name: string; opts: TableOptions; want: Record<string, unknown> }>([
    {
      name: 'orch group, list metadata, metadata rows',
      opts: { apiGroup: 'meta.orch.io', listMeta: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 } },
      want: {
        kind: 'Table',
        apiVersion: 'meta.orch.io/v1',
        metadata: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 },
        rows: [
          { cells: ['a', '2024-01-02T03:04:05Z'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.orch.io/v1', metadata: items[0].metadata } },
          { cells: ['b', '0001-01-01T00:00:00Z'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.orch.io/v1', metadata: items[1].metadata } },
        ],
      },
    },
    {
      name: 'k8s group v1beta1, empty continue dropped',
      opts: { apiGroup: 'meta.k8s.io', version: 'v1beta1', listMeta: { resourceVersion: '42', continue: '' } },
      want: {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1beta1',
        metadata: { resourceVersion: '42' },
        rows: [
          { cells: ['a', '2024-01-02T03:04:05Z'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1', metadata: items[0].metadata } },
          { cells: ['b', '0001-01-01T00:00:00Z'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1', metadata: items[1].metadata } },
        ],
      },
    },
    {
      name: 'whole objects',
      opts: { apiGroup: 'meta.k8s.io', includeObject: 'Object' },
      want: {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: {},
        rows: [
          { cells: ['a', '2024-01-02T03:04:05Z'], object: items[0] },
          { cells: ['b', '0001-01-01T00:00:00Z'], object: items[1] },
        ],
      },
    },
    {
      name: 'no objects',
      opts: { apiGroup: 'meta.k8s.io', includeObject: 'None' },
      want: {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: {},
        rows: [{ cells: ['a', '2024-01-02T03:04:05Z'] }, { cells: ['b', '0001-01-01T00:00:00Z'] }],
      },
    },
  ])('$name', ({ opts, want }) => {
    const before = JSON.stringify(items);
    const { columnDefinitions, ...table } = defaultTable(items, opts);
    expect(table).toEqual(want);
    expect(columnDefinitions).toEqual(DEFAULT_TABLE_COLUMNS.columns);
    expect(JSON.stringify(items)).toBe(before);
  });

  it('leaves out headers when asked', () => {
    expect(defaultTable(items, { apiGroup: 'meta.orch.io', noHeaders: true }).columnDefinitions).toEqual([]);
  });

  it('renders an empty list with rows: []', () => {
    expect(defaultTable([], { apiGroup: 'meta.orch.io' }).rows).toEqual([]);
  });
});

describe('buildTable with custom columns', () => {
  it('uses the kind cells', () => {
    const table = buildTable(
      [cm('a')],
      {
        columns: [
          { name: 'Name', type: 'string', format: 'name', description: '', priority: 0 },
          { name: 'Data', type: 'integer', format: '', description: '', priority: 0 },
        ],
        cells: (obj) => [obj.metadata.name, Object.keys(obj.data as object).length],
      },
      { apiGroup: 'meta.orch.io', includeObject: 'None' },
    );
    expect(table.rows).toEqual([{ cells: ['a', 1] }]);
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Data']);
  });
});
