import { useEffect, useRef, useState } from 'preact/hooks';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { allowed, ApiError, call, collectionPath, objectPath, readLines, request, type KubeObject, type OwnerReference, type ResourceRef } from './api';
import { EventTimeline, eventTime, formatCpu, formatMemory, Sparkline } from './charts';
import { diffLines, type DiffLine } from './diff';
import type { Discovery } from './discovery';
import { DrainPanel, setCordoned } from './drain';
import { useLive } from './live';
import { useUsageHistory } from './metrics';
import { PortForward } from './port-forward';
import { age, detailHref, ErrorNote, SimpleTable } from './tables';
import { Terminal } from './terminal';

export const FIELD_MANAGER = 'orch-dashboard';
const SCALABLE = new Set(['deployments', 'statefulsets', 'replicasets']);
const RESTARTABLE = new Set(['deployments', 'statefulsets', 'daemonsets']);

interface Access {
  verb: string;
  subresource?: string;
  /** Another resource than the object's, in any namespace and of any name (drain: evicting pods). */
  other?: { group: string; resource: string };
}

/** Whether the user may do each of `checks` on this object (SelfSubjectAccessReview); undefined while asking. */
function useAllowed(ref: ResourceRef, name: string, namespace: string | undefined, checks: Access[]): (boolean | undefined)[] {
  const [answers, setAnswers] = useState<(boolean | undefined)[]>(checks.map(() => undefined));
  const key = JSON.stringify([ref.group, ref.resource, name, namespace, checks]);
  useEffect(() => {
    let stale = false;
    const attrs = (c: Access) => (c.other ? { verb: c.verb, ...c.other, subresource: c.subresource } : { verb: c.verb, group: ref.group, resource: ref.resource, subresource: c.subresource, namespace, name });
    void Promise.all(checks.map((c) => allowed(attrs(c)))).then((a) => !stale && setAnswers(a));
    return () => {
      stale = true;
    };
  }, [key]);
  return answers;
}

/** The object as a user edits it: without the server-owned bookkeeping. */
function editable(obj: KubeObject): KubeObject {
  const copy = structuredClone(obj) as KubeObject & { metadata: Record<string, unknown> };
  for (const field of ['managedFields', 'resourceVersion', 'uid', 'creationTimestamp', 'generation']) delete copy.metadata[field];
  delete copy.status;
  return copy;
}

const yamlOf = (obj: KubeObject) => toYaml(editable(obj), { lineWidth: 0 });

function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: preact.ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  const id = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog ref={ref} aria-labelledby={id} onClose={onClose}>
      <h3 id={id}>{title}</h3>
      {children}
    </dialog>
  );
}

/** A pod's or node's CPU and memory over the last samples of the metrics API. */
function UsageOf({ obj }: { obj: KubeObject }) {
  const isNode = obj.kind === 'Node';
  const path = isNode ? `/apis/metrics.k8s.io/v1beta1/nodes/${encodeURIComponent(obj.metadata.name)}` : obj.kind === 'Pod' ? `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(obj.metadata.namespace ?? '')}/pods/${encodeURIComponent(obj.metadata.name)}` : undefined;
  const usage = useUsageHistory(path);
  if (!path) return null;
  const samples = usage.series.get(`${isNode ? '' : obj.metadata.namespace}/${obj.metadata.name}`) ?? [];
  return (
    <section class="usage" aria-labelledby="usage-title">
      <h3 id="usage-title">Usage</h3>
      {samples.length === 0 ? (
        <p>{usage.error ? `No metrics: ${usage.error.message}` : 'No metrics yet (the metrics server reads the node every 15 s).'}</p>
      ) : (
        <p>
          CPU <Sparkline samples={samples} value={(u) => u.cpuMillis} label={`CPU of ${obj.metadata.name}`} format={formatCpu} />
          {' · '}Memory <Sparkline samples={samples} value={(u) => u.memoryBytes} label={`Memory of ${obj.metadata.name}`} format={formatMemory} />
        </p>
      )}
    </section>
  );
}

/** Conditions, owner chain and events of one object. */
function Summary({ obj, discovery }: { obj: KubeObject; discovery?: Discovery }) {
  const [owners, setOwners] = useState<{ ref?: ResourceRef; kind: string; name: string }[]>([]);
  useEffect(() => {
    let stale = false;
    const walk = async () => {
      const chain: { ref?: ResourceRef; kind: string; name: string }[] = [];
      let current: KubeObject | undefined = obj;
      for (let depth = 0; current && depth < 6; depth++) {
        const owner: OwnerReference | undefined = (current.metadata.ownerReferences ?? []).find((o) => o.controller) ?? current.metadata.ownerReferences?.[0];
        if (!owner) break;
        const group: string = owner.apiVersion.includes('/') ? owner.apiVersion.split('/')[0] : '';
        const ref: ResourceRef | undefined = discovery?.byKind.get(`${group}/${owner.kind}`);
        chain.push({ ref, kind: owner.kind, name: owner.name });
        current = ref ? await request<KubeObject>(objectPath(ref, owner.name, obj.metadata.namespace)).catch(() => undefined) : undefined;
      }
      if (!stale) setOwners(chain);
    };
    void walk();
    return () => {
      stale = true;
    };
  }, [obj.metadata.uid, JSON.stringify(obj.metadata.ownerReferences), discovery]);
  const ns = obj.metadata.namespace;
  const events = useLive(`${collectionPath({ group: '', version: 'v1', resource: 'events', namespaced: true }, ns)}?fieldSelector=${encodeURIComponent(`involvedObject.uid=${obj.metadata.uid}`)}`);
  const conditions = (obj.status?.conditions ?? []) as { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  const sortedEvents = [...events.items].sort((a, b) => eventTime(a) - eventTime(b));
  const rollout = obj.kind === 'Deployment' || obj.kind === 'StatefulSet' ? { want: obj.spec?.replicas ?? 1, updated: obj.status?.updatedReplicas ?? 0, ready: obj.status?.readyReplicas ?? 0 } : undefined;
  return (
    <div class="summary">
      {rollout && (
        <p>
          <label for="rollout">Rollout</label> <progress id="rollout" max={Math.max(1, rollout.want)} value={Math.min(rollout.ready, rollout.updated)} /> {Math.min(rollout.ready, rollout.updated)}/{rollout.want} updated and ready
        </p>
      )}
      <UsageOf obj={obj} />
      {(obj.kind === 'Pod' || obj.kind === 'Service') && <PortForward obj={obj} />}
      <h3>Owner chain</h3>
      {owners.length === 0 ? (
        <p>No owner.</p>
      ) : (
        <ol class="owners">
          {owners.map((o) => (
            <li>{o.ref ? <a href={detailHref(o.ref, o.name, ns)}>{`${o.kind}/${o.name}`}</a> : `${o.kind}/${o.name}`}</li>
          ))}
        </ol>
      )}
      <SimpleTable
        caption={`Conditions (${conditions.length})`}
        rows={conditions}
        rowKey={(c) => c.type}
        columns={[
          { name: 'Type', cell: (c) => c.type },
          { name: 'Status', cell: (c) => c.status },
          { name: 'Reason', cell: (c) => c.reason ?? '' },
          { name: 'Message', cell: (c) => c.message ?? '' },
          { name: 'Since', cell: (c) => age(c.lastTransitionTime) },
        ]}
      />
      {events.error && <ErrorNote error={events.error} what="list events" />}
      <h3>Events</h3>
      <EventTimeline events={sortedEvents} />
      <SimpleTable
        caption={`Events (${sortedEvents.length})`}
        rows={sortedEvents}
        rowKey={(e) => e.metadata.uid ?? e.metadata.name}
        columns={[
          { name: 'Type', cell: (e) => String(e.type ?? '') },
          { name: 'Reason', cell: (e) => String(e.reason ?? '') },
          { name: 'Age', cell: (e) => age((e.lastTimestamp ?? e.eventTime) as string) },
          { name: 'Count', cell: (e) => String(e.count ?? 1) },
          { name: 'Message', cell: (e) => String(e.message ?? '') },
        ]}
      />
    </div>
  );
}

/** YAML view and edit: a server-side dry run shows the diff, then server-side apply as orch-dashboard. */
function YamlTab({ obj, resource, canPatch }: { obj: KubeObject; resource: ResourceRef; canPatch?: boolean }) {
  const [draft, setDraft] = useState<string>();
  const [diff, setDiff] = useState<DiffLine[]>();
  const [error, setError] = useState<ApiError>();
  const [note, setNote] = useState('');
  const current = yamlOf(obj);
  const path = objectPath(resource, obj.metadata.name, obj.metadata.namespace);
  const apply = async (dryRun: boolean, force = false) => {
    setError(undefined);
    setNote('');
    try {
      parseYaml(draft ?? '');
    } catch (err) {
      setError(new ApiError(400, 'Invalid', `the YAML does not parse: ${(err as Error).message}`));
      return;
    }
    try {
      const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, ...(dryRun ? { dryRun: 'All' } : {}), ...(force ? { force: 'true' } : {}) });
      const result = await request<KubeObject>(`${path}?${q}`, { method: 'PATCH', contentType: 'application/apply-patch+yaml', body: draft });
      if (dryRun) setDiff(diffLines(current, yamlOf(result)));
      else {
        setNote(`Applied as ${FIELD_MANAGER}.`);
        setDraft(undefined);
        setDiff(undefined);
      }
    } catch (err) {
      setError(err as ApiError);
    }
  };
  if (draft === undefined) {
    return (
      <div>
        {note && <p role="status">{note}</p>}
        {canPatch && (
          <button type="button" onClick={() => (setDraft(current), setDiff(undefined))}>
            Edit YAML
          </button>
        )}
        <pre class="yaml" aria-label="YAML" tabIndex={0}>
          {current}
        </pre>
      </div>
    );
  }
  return (
    <div class="yaml-edit">
      <label for="yaml-draft">YAML to apply</label>
      <textarea id="yaml-draft" rows={24} spellcheck={false} value={draft} onInput={(e) => (setDraft((e.target as HTMLTextAreaElement).value), setDiff(undefined))} />
      <div class="buttons">
        <button type="button" onClick={() => void apply(true)}>
          Review changes
        </button>
        <button type="button" disabled={!diff} onClick={() => void apply(false)}>
          Apply
        </button>
        <button type="button" onClick={() => (setDraft(undefined), setDiff(undefined), setError(undefined))}>
          Cancel
        </button>
      </div>
      {error && (
        <div role="alert" class="error">
          <p>
            {error.code === 409 ? 'Conflict: other field managers own fields this edit changes. ' : ''}
            {error.message}
          </p>
          {error.code === 409 && (
            <button type="button" onClick={() => void apply(false, true)}>
              Apply with force (take ownership)
            </button>
          )}
        </div>
      )}
      {diff && (
        <pre class="diff" aria-label="Changes (server-side dry run)" tabIndex={0}>
          {diff.filter((l) => l.op !== ' ').length === 0
            ? 'No changes.'
            : diff.map((l) => (
                <span class={l.op === '+' ? 'added' : l.op === '-' ? 'removed' : 'same'}>
                  {l.op} {l.text}
                  {'\n'}
                </span>
              ))}
        </pre>
      )}
    </div>
  );
}

const MAX_LOG_LINES = 5000;

/** A pod's log: container picker, previous instance, follow (a streamed read through the gateway). */
function LogsTab({ pod }: { pod: KubeObject }) {
  const containers: string[] = (pod.spec?.containers ?? []).map((c: { name: string }) => c.name);
  const [container, setContainer] = useState(containers[0] ?? '');
  const [follow, setFollow] = useState(true);
  const [previous, setPrevious] = useState(false);
  const [lines, setLines] = useState<string[]>([]);
  const [error, setError] = useState<ApiError>();
  // Read again when the container starts or restarts (a log asked for too early is a 400).
  const state = Object.keys(pod.status?.containerStatuses?.find((c: { name: string }) => c.name === container)?.state ?? {}).join();
  useEffect(() => {
    const abort = new AbortController();
    const buffer: string[] = [];
    let frame = 0;
    setLines([]);
    setError(undefined);
    const q = new URLSearchParams({ container, tailLines: '500', ...(follow && !previous ? { follow: 'true' } : {}), ...(previous ? { previous: 'true' } : {}) });
    call(`${objectPath({ group: '', version: 'v1', resource: 'pods', namespaced: true }, pod.metadata.name, pod.metadata.namespace)}/log?${q}`, { accept: '*/*', signal: abort.signal })
      .then((res) =>
        readLines(res, (line) => {
          buffer.push(line);
          if (buffer.length > MAX_LOG_LINES) buffer.splice(0, buffer.length - MAX_LOG_LINES);
          if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setLines([...buffer])));
        }),
      )
      .catch((err) => !abort.signal.aborted && setError(err instanceof ApiError ? err : new ApiError(0, 'NetworkError', String(err))));
    return () => abort.abort();
  }, [pod.metadata.uid, container, follow, previous, state]);
  return (
    <div class="logs">
      <label for="log-container">Container</label>{' '}
      <select id="log-container" value={container} onChange={(e) => setContainer((e.target as HTMLSelectElement).value)}>
        {containers.map((c) => (
          <option value={c}>{c}</option>
        ))}
      </select>{' '}
      <label>
        <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
      </label>{' '}
      <label>
        <input type="checkbox" checked={previous} onChange={(e) => setPrevious((e.target as HTMLInputElement).checked)} /> Previous instance
      </label>
      {error && <ErrorNote error={error} what="read this pod's log" />}
      <pre class="log" role="log" aria-label="Log" tabIndex={0}>
        {lines.join('\n')}
      </pre>
    </div>
  );
}

function ExecTab({ pod }: { pod: KubeObject }) {
  const containers: string[] = (pod.spec?.containers ?? []).map((c: { name: string }) => c.name);
  const [container, setContainer] = useState(containers[0] ?? '');
  const [command, setCommand] = useState('sh');
  const [session, setSession] = useState<{ container: string; command: string; n: number }>();
  return (
    <div class="exec">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setSession({ container, command, n: (session?.n ?? 0) + 1 });
        }}
      >
        <label for="exec-container">Container</label>{' '}
        <select id="exec-container" value={container} onChange={(e) => setContainer((e.target as HTMLSelectElement).value)}>
          {containers.map((c) => (
            <option value={c}>{c}</option>
          ))}
        </select>{' '}
        <label for="exec-command">Command</label> <input id="exec-command" value={command} onInput={(e) => setCommand((e.target as HTMLInputElement).value)} /> <button type="submit">Connect</button>
      </form>
      {session && <Terminal key={session.n} pod={pod} container={session.container} command={session.command.split(/\s+/).filter(Boolean)} />}
    </div>
  );
}

type Tab = 'summary' | 'yaml' | 'logs' | 'exec';
type DialogName = 'scale' | 'delete' | 'drain';
/** Runs an action and reports its outcome: `what` when it succeeded, else the error. */
type Act = (what: string, run: () => Promise<unknown>) => Promise<void>;

const mergePatch = (p: string, body: unknown) => request(p, { method: 'PATCH', contentType: 'application/merge-patch+json', body: JSON.stringify(body) });

/** The outcome of the last action (a message or an error) and the function that runs one. */
function useActionOutcome(): { message: string; setMessage: (m: string) => void; error?: ApiError; act: Act } {
  const [message, setMessage] = useState('');
  const [error, setError] = useState<ApiError>();
  const act: Act = async (what, run) => {
    setError(undefined);
    setMessage('');
    try {
      await run();
      setMessage(what);
    } catch (err) {
      setError(err as ApiError);
    }
  };
  return { message, setMessage, error, act };
}

interface ActionAccess {
  canPatch?: boolean;
  canDelete?: boolean;
  canScale?: boolean;
  canExec?: boolean;
  canEvict?: boolean;
}

/** The actions the user may take on the object, each shown only when allowed; dialogs open through `open`. */
function ActionBar({ resource: ref, name, namespace, obj, access, act, open }: { resource: ResourceRef; name: string; namespace?: string; obj: KubeObject; access: ActionAccess; act: Act; open: (d: DialogName) => void }) {
  const { canPatch, canDelete, canScale, canEvict } = access;
  const isNode = ref.group === '' && ref.resource === 'nodes';
  const path = objectPath(ref, name, namespace);
  return (
    <div class="actions" role="toolbar" aria-label="Actions" data-access={Object.values(access).every((a) => a !== undefined) ? 'checked' : 'pending'}>
      {canScale && SCALABLE.has(ref.resource) && (
        <button type="button" onClick={() => open('scale')}>
          Scale
        </button>
      )}
      {canPatch && RESTARTABLE.has(ref.resource) && (
        <button type="button" onClick={() => void act('Rollout restart requested.', () => mergePatch(path, { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } }))}>
          Restart
        </button>
      )}
      {canPatch && isNode && (
        <button type="button" onClick={() => void act(obj.spec?.unschedulable ? 'Uncordoned.' : 'Cordoned.', () => setCordoned(name, !obj.spec?.unschedulable))}>
          {obj.spec?.unschedulable ? 'Uncordon' : 'Cordon'}
        </button>
      )}
      {canPatch && canEvict && isNode && (
        <button type="button" onClick={() => open('drain')}>
          Drain
        </button>
      )}
      {canDelete && (
        <button type="button" class="danger" onClick={() => open('delete')}>
          Delete
        </button>
      )}
    </div>
  );
}

/** The replica count form of the Scale dialog, starting from the object's current count. */
function ScaleForm({ obj, path, close, act }: { obj: KubeObject; path: string; close: () => void; act: Act }) {
  const [replicas, setReplicas] = useState(String(obj.spec?.replicas ?? 1));
  return (
    <form
      method="dialog"
      onSubmit={(e) => {
        e.preventDefault();
        close();
        void act(`Scaled to ${replicas}.`, () => mergePatch(`${path}/scale`, { spec: { replicas: Number(replicas) } }));
      }}
    >
      <label for="scale-replicas">Replicas</label> <input id="scale-replicas" type="number" min={0} value={replicas} onInput={(e) => setReplicas((e.target as HTMLInputElement).value)} />
      <button type="submit">Scale</button>
      <button type="button" onClick={close}>
        Cancel
      </button>
    </form>
  );
}

/** The dialogs of the actions: scale, drain (nodes) and delete; `dialog` is the open one. */
function ActionDialogs(p: { resource: ResourceRef; name: string; namespace?: string; obj: KubeObject; dialog?: DialogName; close: () => void; act: Act; setMessage: (m: string) => void }) {
  const { resource: ref, name, obj, dialog, close, act } = p;
  const path = objectPath(ref, name, p.namespace);
  return (
    <>
      <Dialog title={`Scale ${name}`} open={dialog === 'scale'} onClose={close}>
        {dialog === 'scale' && <ScaleForm obj={obj} path={path} close={close} act={act} />}
      </Dialog>
      {ref.group === '' && ref.resource === 'nodes' && (
        <Dialog title={`Drain ${name}`} open={dialog === 'drain'} onClose={close}>
          {dialog === 'drain' && <DrainPanel node={name} onCancel={close} onDone={p.setMessage} />}
        </Dialog>
      )}
      <Dialog title={`Delete ${name}?`} open={dialog === 'delete'} onClose={close}>
        <p>
          {ref.kind ?? ref.resource} {name} will be deleted{ref.resource === 'namespaces' ? ' with everything in it' : ''}.
        </p>
        <button
          type="button"
          class="danger"
          onClick={() => {
            close();
            void act('Deletion requested.', () => request(path, { method: 'DELETE' }));
          }}
        >
          Delete
        </button>
        <button type="button" onClick={close}>
          Cancel
        </button>
      </Dialog>
    </>
  );
}

/** The object's views as tabs (arrow keys move between them): summary and YAML, for pods logs and, when allowed, exec. */
function ObjectViews({ resource: ref, obj, canPatch, canExec, discovery }: { resource: ResourceRef; obj: KubeObject; canPatch?: boolean; canExec?: boolean; discovery?: Discovery }) {
  const [tab, setTab] = useState<Tab>('summary');
  const isPod = ref.group === '' && ref.resource === 'pods';
  const tabs: Tab[] = isPod ? (canExec ? ['summary', 'yaml', 'logs', 'exec'] : ['summary', 'yaml', 'logs']) : ['summary', 'yaml'];
  const onTabKey = (e: KeyboardEvent) => {
    const focused = (e.target as HTMLElement).id.replace(/^tab-/, '') as Tab;
    const i = tabs.includes(focused) ? tabs.indexOf(focused) : tabs.indexOf(tab);
    const next = e.key === 'ArrowRight' ? tabs[(i + 1) % tabs.length] : e.key === 'ArrowLeft' ? tabs[(i + tabs.length - 1) % tabs.length] : undefined;
    if (!next) return;
    e.preventDefault();
    setTab(next);
    document.getElementById(`tab-${next}`)?.focus();
  };
  return (
    <>
      <div role="tablist" aria-label="Views of this object" onKeyDown={onTabKey}>
        {tabs.map((t) => (
          <button type="button" role="tab" id={`tab-${t}`} aria-selected={tab === t} aria-controls={`panel-${t}`} tabIndex={tab === t ? 0 : -1} onClick={() => setTab(t)}>
            {t === 'yaml' ? 'YAML' : t[0].toUpperCase() + t.slice(1)}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === 'summary' && <Summary obj={obj} discovery={discovery} />}
        {tab === 'yaml' && <YamlTab obj={obj} resource={ref} canPatch={canPatch} />}
        {tab === 'logs' && isPod && <LogsTab pod={obj} />}
        {tab === 'exec' && isPod && <ExecTab pod={obj} />}
      </div>
    </>
  );
}

/** One object: actions the user may take, then summary (conditions, owners, events), YAML, logs and exec for pods. */
export function Detail({ resource: ref, namespace, name, discovery }: { resource: ResourceRef; namespace?: string; name: string; discovery?: Discovery }) {
  const list = useLive(`${collectionPath(ref, namespace)}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`);
  const obj = list.items[0];
  const [canPatch, canDelete, canScale, canExec, canEvict] = useAllowed(ref, name, namespace, [
    { verb: 'patch' },
    { verb: 'delete' },
    { verb: 'patch', subresource: 'scale' },
    { verb: 'create', subresource: 'exec' },
    { verb: 'create', subresource: 'eviction', other: { group: '', resource: 'pods' } },
  ]);
  const [dialog, setDialog] = useState<DialogName>();
  const { message, setMessage, error, act } = useActionOutcome();
  return (
    <article class="detail" aria-labelledby="detail-title">
      <h2 id="detail-title">
        {ref.kind ?? ref.resource} {namespace ? `${namespace}/` : ''}
        {name}
      </h2>
      {list.error && <ErrorNote error={list.error} what={`read ${ref.resource} "${name}"`} />}
      {list.loaded && !obj && !list.error && <p role="alert">This object does not exist (any more).</p>}
      {obj && (
        <>
          <ActionBar resource={ref} name={name} namespace={namespace} obj={obj} access={{ canPatch, canDelete, canScale, canExec, canEvict }} act={act} open={setDialog} />
          {message && <p role="status">{message}</p>}
          {error && <ErrorNote error={error} what="do this" />}
          <ObjectViews resource={ref} obj={obj} canPatch={canPatch} canExec={canExec} discovery={discovery} />
          <ActionDialogs resource={ref} name={name} namespace={namespace} obj={obj} dialog={dialog} close={() => setDialog(undefined)} act={act} setMessage={setMessage} />
        </>
      )}
    </article>
  );
}
