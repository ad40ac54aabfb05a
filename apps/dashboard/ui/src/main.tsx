import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentSession, login, logout, type ResourceRef, type SessionInfo } from './api';
import { Detail } from './detail';
import { CORE, useDiscovery, WORKLOADS } from './discovery';
import { useLive } from './live';
import { Overview } from './overview';
import { refKey, ResourceTable } from './tables';
import './styles.css';

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/overview');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/overview');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function Login({ onLogin }: { onLogin: (s: SessionInfo) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <main class="login">
      <h1>orch dashboard</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError('');
          login(token).then(onLogin, (err: Error) => (setError(err.message), setBusy(false)));
        }}
      >
        <label for="token">Bearer token</label>
        <input id="token" name="token" type="password" autocomplete="off" required value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
        <p class="hint">
          A service-account token (<code>kubectl create token NAME</code>), an OIDC id_token or a static token. It stays on the dashboard server; the browser keeps only a session cookie.
        </p>
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {error && <p role="alert">{error}</p>}
      </form>
    </main>
  );
}

/** Namespace picker: the namespaces the user may list, or a free field when they may not. */
function NamespacePicker({ value, onChange }: { value: string; onChange: (ns: string) => void }) {
  const namespaces = useLive('/api/v1/namespaces');
  const [typed, setTyped] = useState(value);
  if (namespaces.error) {
    return (
      <form
        class="namespace-field"
        onSubmit={(e) => {
          e.preventDefault();
          onChange(typed.trim());
        }}
      >
        <label for="namespace">Namespace</label> <input id="namespace" value={typed} placeholder="all (Enter to show)" onInput={(e) => setTyped((e.target as HTMLInputElement).value)} onBlur={() => onChange(typed.trim())} />
      </form>
    );
  }
  const names = namespaces.items.map((n) => n.metadata.name).sort();
  return (
    <span>
      <label for="namespace">Namespace</label>{' '}
      <select id="namespace" value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">All namespaces</option>
        {names.map((n) => (
          <option value={n}>{n}</option>
        ))}
        {value && !names.includes(value) && <option value={value}>{value}</option>}
      </select>
    </span>
  );
}

function Workloads({ namespace, kind }: { namespace: string; kind: string }) {
  const active = WORKLOADS.find((w) => w.resource === kind) ?? WORKLOADS[0];
  return (
    <div>
      <nav aria-label="Workload kinds" class="subnav">
        {WORKLOADS.map((w) => (
          <a href={`#/workloads/${w.resource}`} aria-current={w === active ? 'page' : undefined}>
            {w.kind}s
          </a>
        ))}
      </nav>
      <ResourceTable resource={active} namespace={namespace || undefined} />
    </div>
  );
}

function Services({ namespace }: { namespace: string }) {
  return (
    <div>
      <ResourceTable resource={CORE.services} namespace={namespace || undefined} />
      <ResourceTable resource={CORE.endpoints} namespace={namespace || undefined} />
    </div>
  );
}

function ResourceTypes({ resources }: { resources: ResourceRef[] }) {
  const [filter, setFilter] = useState('');
  const shown = resources.filter((r) => `${r.resource}.${r.group} ${r.kind}`.toLowerCase().includes(filter.toLowerCase()));
  return (
    <section aria-label="Resource types">
      <label for="type-filter">Filter resource types</label> <input id="type-filter" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
      <ul class="types">
        {shown.map((r) => (
          <li>
            <a href={`#/r/${refKey(r)}`}>
              {r.resource}
              {r.group ? `.${r.group}` : ''}
            </a>{' '}
            <small>
              {r.kind}, {r.version}
              {r.namespaced ? '' : ', cluster-scoped'}
            </small>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** `core/v1/pods` → the ResourceRef (from discovery, else the built-in table). */
function resolve(key: string, resources: ResourceRef[] | undefined): ResourceRef | undefined {
  const [group, version, resource] = key.split('/');
  const g = group === 'core' ? '' : group;
  return resources?.find((r) => r.group === g && r.version === version && r.resource === resource) ?? Object.values(CORE).find((r) => r.group === g && r.version === version && r.resource === resource);
}

const SECTIONS = [
  { href: '#/overview', label: 'Overview' },
  { href: '#/namespaces', label: 'Namespaces' },
  { href: '#/workloads', label: 'Workloads' },
  { href: '#/services', label: 'Services' },
  { href: '#/resources', label: 'All resources' },
];

function Shell({ session, onLogout }: { session: SessionInfo; onLogout: () => void }) {
  const hash = useHash();
  const discovery = useDiscovery();
  const [namespace, setNamespace] = useState(() => sessionStorage.getItem('namespace') ?? '');
  useEffect(() => sessionStorage.setItem('namespace', namespace), [namespace]);
  const parts = hash.slice(2).split('/').map(decodeURIComponent);
  let view;
  switch (parts[0]) {
    case 'namespaces':
      view = <ResourceTable resource={CORE.namespaces} />;
      break;
    case 'workloads':
      view = <Workloads namespace={namespace} kind={parts[1] ?? 'deployments'} />;
      break;
    case 'services':
      view = <Services namespace={namespace} />;
      break;
    case 'resources':
      view = discovery ? <ResourceTypes resources={discovery.resources} /> : <p>Loading discovery…</p>;
      break;
    case 'r': {
      const ref = resolve(parts.slice(1, 4).join('/'), discovery?.resources);
      view = ref ? <ResourceTable resource={ref} namespace={ref.namespaced ? namespace || undefined : undefined} /> : <p>{discovery ? 'Unknown resource type.' : 'Loading discovery…'}</p>;
      break;
    }
    case 'o': {
      const ref = resolve(parts.slice(1, 4).join('/'), discovery?.resources);
      view = ref ? <Detail key={hash} resource={ref} namespace={parts[4] === '_' ? undefined : parts[4]} name={parts[5]} discovery={discovery} /> : <p>Loading discovery…</p>;
      break;
    }
    default:
      view = <Overview namespace={namespace || undefined} />;
  }
  const current = `#/${parts[0] === 'r' ? 'resources' : parts[0]}`;
  return (
    <div class="shell">
      <header>
        <h1>orch</h1>
        <nav aria-label="Sections">
          {SECTIONS.map((s) => (
            <a href={s.href} aria-current={current === s.href ? 'page' : undefined}>
              {s.label}
            </a>
          ))}
        </nav>
        <NamespacePicker value={namespace} onChange={setNamespace} />
        <span class="user" title={session.groups.join(', ')}>
          {session.user}
        </span>
        <button type="button" onClick={() => void logout().then(onLogout)}>
          Log out
        </button>
      </header>
      <main id="main">{view}</main>
    </div>
  );
}

function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  useEffect(() => {
    currentSession().then(
      (s) => setSession(s ?? null),
      () => setSession(null),
    );
  }, []);
  if (session === undefined) return <p>Loading…</p>;
  if (session === null) return <Login onLogin={setSession} />;
  return <Shell session={session} onLogout={() => setSession(null)} />;
}

render(<App />, document.getElementById('app')!);
