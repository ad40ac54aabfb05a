import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, TABLE_ACCEPT, watch, type KubeObject, type TableColumn, type TableRow } from './api';

/** What a live list shows: the current items, the Table columns (table mode), and the last error. */
export interface LiveList<T> {
  items: T[];
  columns: TableColumn[];
  error?: ApiError;
  loaded: boolean;
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: any;
}

const keyOf = (o: KubeObject) => o.metadata.uid ?? `${o.metadata.namespace}/${o.metadata.name}`;
const RETRY_MS = [500, 1000, 2000, 5000];

/**
 * Lists `path` and then watches it from the list's resourceVersion (an informer): the result
 * follows the cluster without reloads. Events are applied as they arrive and rendered at most
 * once per animation frame. A watch that ends is resumed; an expired resourceVersion (410)
 * or a failure relists after a backoff. `table` asks for the server's Table representation
 * (kubectl's columns); items are then Table rows.
 */
function subscribe<T>(path: string, table: boolean, onChange: (list: LiveList<T>) => void): () => void {
  const abort = new AbortController();
  const items = new Map<string, T>();
  let columns: TableColumn[] = [];
  let frame = 0;
  let failures = 0;
  let error: ApiError | undefined;
  let loaded = false;
  const emit = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      onChange({ items: [...items.values()], columns, error, loaded });
    });
  };
  const objectOf = (x: any): KubeObject => (table ? (x as TableRow).object : (x as KubeObject));
  const sep = path.includes('?') ? '&' : '?';
  const accept = table ? TABLE_ACCEPT : 'application/json';

  const run = async () => {
    while (!abort.signal.aborted) {
      try {
        const res = await call(path, { accept, signal: abort.signal });
        const list = await res.json();
        items.clear();
        if (table) columns = list.columnDefinitions ?? [];
        for (const x of table ? list.rows ?? [] : list.items ?? []) items.set(keyOf(objectOf(x)), x as T);
        let rv: string = list.metadata?.resourceVersion ?? '';
        error = undefined;
        loaded = true;
        failures = 0;
        emit();
        // Watch until the server ends the stream; resume from the last seen resourceVersion.
        for (;;) {
          let expired = false;
          await watch(`${path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`, accept, (line) => {
            if (!line.trim()) return;
            const event = JSON.parse(line) as WatchEvent;
            if (event.type === 'ERROR') {
              expired = event.object?.code === 410;
              if (!expired) error = new ApiError(event.object?.code ?? 500, event.object?.reason ?? 'Error', event.object?.message ?? 'watch error');
              return;
            }
            // Table events carry a one-row Table.
            const x = table ? (event.object.rows?.[0] as TableRow | undefined) : event.object;
            const rvOf = table ? event.object.rows?.[0]?.object?.metadata?.resourceVersion ?? event.object.metadata?.resourceVersion : event.object.metadata?.resourceVersion;
            if (rvOf) rv = rvOf;
            if (event.type === 'BOOKMARK' || !x) return;
            if (table && event.object.columnDefinitions?.length && columns.length === 0) columns = event.object.columnDefinitions;
            const key = keyOf(objectOf(x));
            if (event.type === 'DELETED') items.delete(key);
            else items.set(key, x as T);
            emit();
          }, abort.signal);
          if (expired || error) break;
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        error = err instanceof ApiError ? err : new ApiError(0, 'NetworkError', (err as Error).message);
        loaded = true;
        emit();
        // Permission and not-found answers do not change by retrying quickly.
        if (error.code === 403 || error.code === 404 || error.code === 401) failures = RETRY_MS.length - 1;
      }
      await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]));
    }
  };
  void run();
  return () => {
    abort.abort();
    if (frame) cancelAnimationFrame(frame);
  };
}

/** A live list of objects (`table` false) or Table rows (`table` true) at `path`; `path` undefined: nothing. */
export function useLive<T = KubeObject>(path: string | undefined, table = false): LiveList<T> {
  const [list, setList] = useState<LiveList<T>>({ items: [], columns: [], loaded: false });
  useEffect(() => {
    setList({ items: [], columns: [], loaded: false });
    if (!path) return undefined;
    return subscribe<T>(path, table, setList);
  }, [path, table]);
  return list;
}
