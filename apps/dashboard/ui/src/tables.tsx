import type { ComponentChildren } from 'preact';
import { ApiError, collectionPath, type KubeObject, type ResourceRef, type TableRow } from './api';
import { useLive } from './live';

export const refKey = (r: ResourceRef) => `${r.group || 'core'}/${r.version}/${r.resource}`;

/** `#/o/<group>/<version>/<resource>/<namespace or _>/<name>`: the detail view's address of an object. */
export function detailHref(r: ResourceRef, name: string, namespace?: string): string {
  return `#/o/${refKey(r)}/${namespace || '_'}/${encodeURIComponent(name)}`;
}

/** A clear sentence for a failed list or read, 403 above all. */
export function ErrorNote({ error, what }: { error: ApiError; what: string }) {
  const text =
    error.code === 403
      ? `Forbidden: your account may not ${what}. Ask an administrator for a Role that allows it. (${error.message})`
      : error.code === 404
        ? `Not found: ${error.message}`
        : `${error.reason || 'Error'} (${error.code}): ${error.message}`;
  return (
    <p role="alert" class={`error code-${error.code}`}>
      {text}
    </p>
  );
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export function age(ts?: string): string {
  if (!ts) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const byNamespaceAndName = (a: TableRow, b: TableRow) =>
  (a.object.metadata.namespace ?? '').localeCompare(b.object.metadata.namespace ?? '') || a.object.metadata.name.localeCompare(b.object.metadata.name);

/**
 * Any resource as `kubectl get` shows it: the server's Table columns (priority 0), live through a
 * Table watch. The name cell links to the object's detail view; rows are reachable by keyboard.
 */
export function ResourceTable({ resource, namespace, title }: { resource: ResourceRef; namespace?: string; title?: string }) {
  const path = collectionPath(resource, namespace);
  const list = useLive<TableRow>(path, true);
  const columns = list.columns.map((c, i) => ({ ...c, i })).filter((c) => !c.priority);
  const rows = [...list.items].sort(byNamespaceAndName);
  const showNamespace = resource.namespaced && !namespace;
  const caption = title ?? `${resource.resource}${resource.group ? `.${resource.group}` : ''}${resource.namespaced ? (namespace ? ` in ${namespace}` : ' in all namespaces') : ''}`;
  return (
    <section class="resource-table" aria-label={caption}>
      {list.error && <ErrorNote error={list.error} what={`list ${resource.resource}${resource.namespaced ? (namespace ? ` in namespace "${namespace}"` : ' in all namespaces') : ''}`} />}
      <table data-resource={resource.resource}>
        <caption>
          {caption} <span class="count">({list.loaded ? rows.length : 'loading'})</span>
        </caption>
        <thead>
          <tr>
            {showNamespace && <th scope="col">Namespace</th>}
            {columns.map((c) => (
              <th scope="col" title={c.description}>
                {c.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.object.metadata.uid} data-name={row.object.metadata.name}>
              {showNamespace && <td>{row.object.metadata.namespace}</td>}
              {columns.map((c) =>
                c.format === 'name' ? (
                  <td>
                    <a href={detailHref(resource, row.object.metadata.name, row.object.metadata.namespace)}>{cellText(row.cells[c.i])}</a>
                  </td>
                ) : (
                  <td>{cellText(row.cells[c.i])}</td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A small table of plain objects with given columns (overview cards, events). */
export function SimpleTable<T>({ caption, columns, rows, rowKey }: { caption: string; columns: { name: string; cell: (r: T) => ComponentChildren }[]; rows: T[]; rowKey: (r: T) => string }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{c.name}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={rowKey(r)}>
            {columns.map((c) => (
              <td>{c.cell(r)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export type { KubeObject };
