import { JsonPath, type PrinterColumn, type ResourceDef } from '@orch/api';
import { DEFAULT_TABLE_COLUMNS, humanDuration, parseTime, type KubeObject, type TableColumnDefinition, type TableColumns } from '@orch/apimachinery';

/**
 * Table columns per kind, the ones users know from kubectl (`get pods`: Name, Ready, Status,
 * Restarts, Age, IP, Node, ...). Kinds not listed use the SPEC default (Name, Created At).
 * Priority 0 columns show by default; priority 1 only with `-o wide`.
 */
type Obj = KubeObject & Record<string, any>;

function col(name: string, type = 'string', priority = 0, format = ''): TableColumnDefinition {
  return { name, type, format: name === 'Name' ? 'name' : format, description: `${name} of the object.`, priority };
}

/** Age as upstream prints it (`5m`, `3h2m`, `<unknown>`). */
export function age(ts: string | undefined, now = Date.now()): string {
  if (!ts) return '<unknown>';
  const t = parseTime(ts);
  return t === undefined || Number.isNaN(t) ? '<unknown>' : humanDuration(Math.max(0, now - t));
}

function containers(spec: any): any[] {
  return Array.isArray(spec?.containers) ? spec.containers : [];
}
const names = (cs: any[]) => cs.map((c) => c.name).join(',');
const images = (cs: any[]) => cs.map((c) => c.image).join(',');
function selectorText(sel: any): string {
  if (!sel) return '<none>';
  const parts = Object.entries(sel.matchLabels ?? (sel.matchExpressions ? {} : sel)).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const vals = (e.values ?? []).join(',');
    parts.push(e.operator === 'Exists' ? e.key : e.operator === 'DoesNotExist' ? `!${e.key}` : `${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${vals})`);
  }
  return parts.length ? parts.join(',') : '<none>';
}
const orNone = (v: unknown) => (v === undefined || v === null || v === '' ? '<none>' : v);

/** Pod status as kubectl shows it (upstream printPod's reason rules, condensed). */
export function podStatusReason(pod: Obj): string {
  const st = pod.status ?? {};
  let reason: string = st.reason || st.phase || 'Unknown';
  const inits: any[] = st.initContainerStatuses ?? [];
  let initializing = false;
  inits.forEach((c, i) => {
    if (initializing) return;
    const term = c.state?.terminated;
    if (term && term.exitCode === 0) return;
    initializing = true;
    if (term) reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${(pod.spec?.initContainers ?? []).length}`;
  });
  if (!initializing) {
    let running = false;
    for (const c of [...(st.containerStatuses ?? [])].reverse()) {
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
      else if (c.state?.terminated) reason = c.state.terminated.signal ? `Signal:${c.state.terminated.signal}` : `ExitCode:${c.state.terminated.exitCode}`;
      else if (c.ready && c.state?.running) running = true;
    }
    if (reason === 'Completed' && running) reason = (st.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
  }
  if (pod.metadata.deletionTimestamp) reason = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

function podRestarts(pod: Obj): string {
  let restarts = 0;
  let last: number | undefined;
  for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    restarts += c.restartCount ?? 0;
    const finished = c.lastState?.terminated?.finishedAt;
    if (finished) {
      const t = parseTime(finished);
      if (t !== undefined && (last === undefined || t > last)) last = t;
    }
  }
  return last !== undefined && restarts > 0 ? `${restarts} (${humanDuration(Date.now() - last)} ago)` : String(restarts);
}

function nodeStatus(node: Obj): string {
  const ready = (node.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
  const parts = [ready?.status === 'True' ? 'Ready' : 'NotReady'];
  if (ready === undefined) parts[0] = 'Unknown';
  if (node.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(node: Obj): string {
  const roles = Object.keys(node.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.orch.io/'))
    .map((k) => k.slice('node-role.orch.io/'.length));
  return roles.length ? roles.join(',') : '<none>';
}

function servicePorts(svc: Obj): string {
  const ports: any[] = svc.spec?.ports ?? [];
  if (!ports.length) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

function externalIps(svc: Obj): string {
  const type = svc.spec?.type ?? 'ClusterIP';
  const lb = (svc.status?.loadBalancer?.ingress ?? []).map((i: any) => i.ip || i.hostname);
  const ext = svc.spec?.externalIPs ?? [];
  if (type === 'ExternalName') return svc.spec?.externalName ?? '<none>';
  if (type === 'LoadBalancer') return [...lb, ...ext].join(',') || '<pending>';
  return ext.length ? ext.join(',') : '<none>';
}

function endpointsText(ep: Obj): string {
  const out: string[] = [];
  for (const s of ep.subsets ?? []) for (const a of s.addresses ?? []) for (const p of s.ports ?? [{}]) out.push(p.port ? `${a.ip}:${p.port}` : a.ip);
  if (!out.length) return '<none>';
  return out.length > 3 ? `${out.slice(0, 3).join(',')} + ${out.length - 3} more...` : out.join(',');
}

function jobStatus(job: Obj): string {
  const conds: any[] = job.status?.conditions ?? [];
  const has = (t: string) => conds.some((c) => c.type === t && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp) return 'Terminating';
  if (has('Suspended')) return 'Suspended';
  if (has('FailureTarget')) return 'FailureTarget';
  return 'Running';
}

function jobDuration(job: Obj): string {
  const start = job.status?.startTime && parseTime(job.status.startTime);
  if (!start) return '';
  const end = job.status?.completionTime ? parseTime(job.status.completionTime)! : Date.now();
  return humanDuration(end - start);
}

/** An autoscaler's targets as kubectl shows them: `cpu: 85%/50%` per metric (`<unknown>` before the first measurement). */
function hpaTargets(h: Obj): string {
  const specs: any[] = h.spec?.metrics ?? [];
  const current: any[] = h.status?.currentMetrics ?? [];
  if (specs.length === 0) return '<none>';
  return specs
    .map((m, i) => {
      if (m.type !== 'Resource' || !m.resource) return `<${String(m.type).toLowerCase()}>`;
      const cur = current[i]?.resource?.current;
      const t = m.resource.target ?? {};
      if (t.type === 'Utilization') return `${m.resource.name}: ${cur?.averageUtilization !== undefined ? `${cur.averageUtilization}%` : '<unknown>'}/${t.averageUtilization}%`;
      return `${m.resource.name}: ${cur?.averageValue ?? '<unknown>'}/${t.averageValue ?? t.value}`;
    })
    .join(', ');
}

const HPA_TABLE: TableColumns = {
  columns: [col('Name'), col('Reference'), col('Targets'), col('MinPods', 'integer'), col('MaxPods', 'integer'), col('Replicas', 'integer'), col('Age')],
  cells: (h: Obj) => [h.metadata.name, `${h.spec?.scaleTargetRef?.kind ?? ''}/${h.spec?.scaleTargetRef?.name ?? ''}`, hpaTargets(h), h.spec?.minReplicas ?? 1, h.spec?.maxReplicas ?? 0, h.status?.currentReplicas ?? 0, age(h.metadata.creationTimestamp)],
};

const TABLES: Record<string, TableColumns> = {
  'autoscaling/horizontalpodautoscalers': HPA_TABLE,
  'apiregistration.orch.io/apiservices': {
    columns: [col('Name'), col('Service'), col('Available'), col('Age')],
    cells: (a: Obj) => {
      const svc = a.spec?.service;
      const available = (a.status?.conditions ?? []).find((c: any) => c.type === 'Available');
      const availableText = !available ? 'Unknown' : available.status === 'True' ? 'True' : `${available.status} (${available.reason})`;
      return [a.metadata.name, svc?.name ? `${svc.namespace}/${svc.name}` : 'Local', availableText, age(a.metadata.creationTimestamp)];
    },
  },
  '/pods': {
    columns: [col('Name'), col('Ready'), col('Status'), col('Restarts'), col('Age'), col('IP', 'string', 1), col('Node', 'string', 1), col('Nominated Node', 'string', 1), col('Readiness Gates', 'string', 1)],
    cells: (p: Obj) => {
      const statuses: any[] = p.status?.containerStatuses ?? [];
      const total = containers(p.spec).length;
      const gates: any[] = p.spec?.readinessGates ?? [];
      const gatesReady = gates.filter((g) => (p.status?.conditions ?? []).some((c: any) => c.type === g.conditionType && c.status === 'True')).length;
      return [
        p.metadata.name,
        `${statuses.filter((c) => c.ready).length}/${total}`,
        podStatusReason(p),
        podRestarts(p),
        age(p.metadata.creationTimestamp),
        orNone(p.status?.podIP),
        orNone(p.spec?.nodeName),
        orNone(p.status?.nominatedNodeName),
        gates.length ? `${gatesReady}/${gates.length}` : '<none>',
      ];
    },
  },
  '/namespaces': { columns: [col('Name'), col('Status'), col('Age')], cells: (n: Obj) => [n.metadata.name, n.status?.phase ?? '', age(n.metadata.creationTimestamp)] },
  '/nodes': {
    columns: [col('Name'), col('Status'), col('Roles'), col('Age'), col('Version'), col('Internal-IP', 'string', 1), col('External-IP', 'string', 1), col('OS-Image', 'string', 1), col('Kernel-Version', 'string', 1), col('Container-Runtime', 'string', 1)],
    cells: (n: Obj) => {
      const addr = (t: string) => orNone((n.status?.addresses ?? []).find((a: any) => a.type === t)?.address);
      const info = n.status?.nodeInfo ?? {};
      return [n.metadata.name, nodeStatus(n), nodeRoles(n), age(n.metadata.creationTimestamp), info.kubeletVersion ?? '', addr('InternalIP'), addr('ExternalIP'), orNone(info.osImage), orNone(info.kernelVersion), orNone(info.containerRuntimeVersion)];
    },
  },
  '/services': {
    columns: [col('Name'), col('Type'), col('Cluster-IP'), col('External-IP'), col('Port(s)'), col('Age'), col('Selector', 'string', 1)],
    cells: (s: Obj) => [s.metadata.name, s.spec?.type ?? 'ClusterIP', orNone(s.spec?.clusterIP), externalIps(s), servicePorts(s), age(s.metadata.creationTimestamp), s.spec?.selector ? selectorText(s.spec.selector) : '<none>'],
  },
  '/configmaps': {
    columns: [col('Name'), col('Data', 'integer'), col('Age')],
    cells: (c: Obj) => [c.metadata.name, Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length, age(c.metadata.creationTimestamp)],
  },
  '/secrets': {
    columns: [col('Name'), col('Type'), col('Data', 'integer'), col('Age')],
    cells: (s: Obj) => [s.metadata.name, s.type ?? 'Opaque', Object.keys(s.data ?? {}).length, age(s.metadata.creationTimestamp)],
  },
  '/serviceaccounts': { columns: [col('Name'), col('Secrets', 'integer'), col('Age')], cells: (s: Obj) => [s.metadata.name, (s.secrets ?? []).length, age(s.metadata.creationTimestamp)] },
  '/endpoints': { columns: [col('Name'), col('Endpoints'), col('Age')], cells: (e: Obj) => [e.metadata.name, endpointsText(e), age(e.metadata.creationTimestamp)] },
  '/events': {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Subobject', 'string', 1), col('Source', 'string', 1), col('Message'), col('First Seen', 'string', 1), col('Count', 'integer', 1), col('Name', 'string', 1)],
    cells: (e: Obj) => {
      const last = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
      const first = e.firstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
      const obj = e.involvedObject ?? {};
      const source = e.source?.component ? `${e.source.component}${e.source.host ? `, ${e.source.host}` : ''}` : e.reportingComponent ?? '';
      return [age(last), e.type ?? '', e.reason ?? '', `${String(obj.kind ?? '').toLowerCase()}/${obj.name ?? ''}`, obj.fieldPath ?? '', source, e.message ?? '', age(first), e.series?.count ?? e.count ?? 1, e.metadata.name];
    },
  },
  'apps/deployments': {
    columns: [col('Name'), col('Ready'), col('Up-to-date', 'integer'), col('Available', 'integer'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (d: Obj) => {
      const cs = containers(d.spec?.template?.spec);
      return [d.metadata.name, `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`, d.status?.updatedReplicas ?? 0, d.status?.availableReplicas ?? 0, age(d.metadata.creationTimestamp), names(cs), images(cs), selectorText(d.spec?.selector)];
    },
  },
  'apps/replicasets': {
    columns: [col('Name'), col('Desired', 'integer'), col('Current', 'integer'), col('Ready', 'integer'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (r: Obj) => {
      const cs = containers(r.spec?.template?.spec);
      return [r.metadata.name, r.spec?.replicas ?? 0, r.status?.replicas ?? 0, r.status?.readyReplicas ?? 0, age(r.metadata.creationTimestamp), names(cs), images(cs), selectorText(r.spec?.selector)];
    },
  },
  'apps/statefulsets': {
    columns: [col('Name'), col('Ready'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1)],
    cells: (s: Obj) => {
      const cs = containers(s.spec?.template?.spec);
      return [s.metadata.name, `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 0}`, age(s.metadata.creationTimestamp), names(cs), images(cs)];
    },
  },
  'apps/daemonsets': {
    columns: [col('Name'), col('Desired', 'integer'), col('Current', 'integer'), col('Ready', 'integer'), col('Up-to-date', 'integer'), col('Available', 'integer'), col('Node Selector'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (d: Obj) => {
      const st = d.status ?? {};
      const cs = containers(d.spec?.template?.spec);
      const ns = d.spec?.template?.spec?.nodeSelector;
      return [d.metadata.name, st.desiredNumberScheduled ?? 0, st.currentNumberScheduled ?? 0, st.numberReady ?? 0, st.updatedNumberScheduled ?? 0, st.numberAvailable ?? 0, ns ? selectorText(ns) : '<none>', age(d.metadata.creationTimestamp), names(cs), images(cs), selectorText(d.spec?.selector)];
    },
  },
  'batch/jobs': {
    columns: [col('Name'), col('Status'), col('Completions'), col('Duration'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (j: Obj) => {
      const cs = containers(j.spec?.template?.spec);
      const completions = j.spec?.completions !== undefined ? `${j.status?.succeeded ?? 0}/${j.spec.completions}` : `${j.status?.succeeded ?? 0}/1 of ${j.spec?.parallelism ?? 1}`;
      return [j.metadata.name, jobStatus(j), completions, jobDuration(j), age(j.metadata.creationTimestamp), names(cs), images(cs), selectorText(j.spec?.selector)];
    },
  },
  'batch/cronjobs': {
    columns: [col('Name'), col('Schedule'), col('Timezone'), col('Suspend', 'boolean'), col('Active', 'integer'), col('Last Schedule'), col('Age'), col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)],
    cells: (c: Obj) => {
      const cs = containers(c.spec?.jobTemplate?.spec?.template?.spec);
      return [c.metadata.name, c.spec?.schedule ?? '', orNone(c.spec?.timeZone), !!c.spec?.suspend, (c.status?.active ?? []).length, c.status?.lastScheduleTime ? age(c.status.lastScheduleTime) : '<none>', age(c.metadata.creationTimestamp), names(cs), images(cs), selectorText(c.spec?.jobTemplate?.spec?.selector)];
    },
  },
  'coordination.orch.io/leases': { columns: [col('Name'), col('Holder'), col('Age')], cells: (l: Obj) => [l.metadata.name, l.spec?.holderIdentity ?? '', age(l.metadata.creationTimestamp)] },
  'policy/poddisruptionbudgets': {
    columns: [col('Name'), col('Min Available'), col('Max Unavailable'), col('Allowed Disruptions', 'integer'), col('Age')],
    cells: (p: Obj) => [p.metadata.name, orNone(p.spec?.minAvailable) === '<none>' ? 'N/A' : String(p.spec.minAvailable), p.spec?.maxUnavailable === undefined ? 'N/A' : String(p.spec.maxUnavailable), p.status?.disruptionsAllowed ?? 0, age(p.metadata.creationTimestamp)],
  },
  'discovery.orch.io/endpointslices': {
    columns: [col('Name'), col('AddressType'), col('Ports'), col('Endpoints'), col('Age')],
    cells: (s: Obj) => {
      const ports = (s.ports ?? []).map((p: any) => p.port).filter((p: unknown) => p !== undefined);
      const addrs = (s.endpoints ?? []).flatMap((e: any) => e.addresses ?? []);
      return [s.metadata.name, s.addressType ?? '', ports.length ? ports.join(',') : '<unset>', addrs.length ? (addrs.length > 3 ? `${addrs.slice(0, 3).join(',')} + ${addrs.length - 3} more...` : addrs.join(',')) : '<unset>', age(s.metadata.creationTimestamp)];
    },
  },
  'certificates.orch.io/certificatesigningrequests': {
    columns: [col('Name'), col('Age'), col('SignerName'), col('Requestor'), col('RequestedDuration'), col('Condition')],
    cells: (c: Obj) => {
      const conds = (c.status?.conditions ?? []).map((x: any) => x.type);
      if (c.status?.certificate) conds.push('Issued');
      return [c.metadata.name, age(c.metadata.creationTimestamp), c.spec?.signerName ?? '', c.spec?.username ?? '', c.spec?.expirationSeconds ? humanDuration(c.spec.expirationSeconds * 1000) : '<none>', conds.length ? conds.join(',') : 'Pending'];
    },
  },
  'scheduling.orch.io/priorityclasses': {
    columns: [col('Name'), col('Value', 'integer'), col('Global-Default', 'boolean'), col('Age'), col('PreemptionPolicy', 'string', 1)],
    cells: (p: Obj) => [p.metadata.name, p.value ?? 0, !!p.globalDefault, age(p.metadata.creationTimestamp), p.preemptionPolicy ?? 'PreemptLowerPriority'],
  },
  'rbac.authorization.orch.io/rolebindings': {
    columns: [col('Name'), col('Role'), col('Age'), col('Users', 'string', 1), col('Groups', 'string', 1), col('ServiceAccounts', 'string', 1)],
    cells: (b: Obj) => bindingCells(b),
  },
  'rbac.authorization.orch.io/clusterrolebindings': {
    columns: [col('Name'), col('Role'), col('Age'), col('Users', 'string', 1), col('Groups', 'string', 1), col('ServiceAccounts', 'string', 1)],
    cells: (b: Obj) => bindingCells(b),
  },
  'networking.orch.io/ingresses': {
    columns: [col('Name'), col('Class'), col('Hosts'), col('Address'), col('Ports'), col('Age')],
    cells: (i: Obj) => {
      const hosts = (i.spec?.rules ?? []).map((r: any) => r.host).filter(Boolean);
      const addr = (i.status?.loadBalancer?.ingress ?? []).map((x: any) => x.ip || x.hostname);
      return [i.metadata.name, orNone(i.spec?.ingressClassName), hosts.length ? hosts.join(',') : '*', addr.join(','), i.spec?.tls?.length ? '80, 443' : '80', age(i.metadata.creationTimestamp)];
    },
  },
  '/persistentvolumeclaims': {
    columns: [col('Name'), col('Status'), col('Volume'), col('Capacity'), col('Access Modes'), col('StorageClass'), col('Age'), col('VolumeMode', 'string', 1)],
    cells: (p: Obj) => [p.metadata.name, p.status?.phase ?? '', p.spec?.volumeName ?? '', p.status?.capacity?.storage ?? '', (p.status?.accessModes ?? []).join(','), orNone(p.spec?.storageClassName), age(p.metadata.creationTimestamp), p.spec?.volumeMode ?? 'Filesystem'],
  },
};

function bindingCells(b: Obj): unknown[] {
  const subjects: any[] = b.subjects ?? [];
  const of = (kind: string) => subjects.filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name)).join(', ');
  return [b.metadata.name, `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`, age(b.metadata.creationTimestamp), of('User'), of('Group'), of('ServiceAccount')];
}

/** A CRD version without printer columns shows its objects' age (upstream serveDefaultColumnsIfEmpty). */
const DEFAULT_CUSTOM_COLUMNS: PrinterColumn[] = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];

/** A printer column's cell from the first value its JSONPath selects (upstream apiextensions tableconvertor). */
function customCell(type: string, values: unknown[]): unknown {
  if (values.length === 0 || values[0] === undefined) return null;
  const v = values[0];
  switch (type) {
    case 'date':
      return typeof v === 'string' ? (parseTime(v) === undefined ? '<invalid>' : age(v)) : null;
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}

/** The Table of a custom resource: Name and its CRD version's additionalPrinterColumns. */
function customColumns(printerColumns: readonly PrinterColumn[]): TableColumns {
  const cols = printerColumns.length ? printerColumns : DEFAULT_CUSTOM_COLUMNS;
  const paths = cols.map((c) => JsonPath.parse(c.jsonPath));
  return {
    columns: [
      col('Name'),
      ...cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`, priority: c.priority ?? 0 })),
    ],
    cells: (obj) => [obj.metadata.name, ...cols.map((c, i) => customCell(c.type, paths[i].find(obj)))],
  };
}

const customTables = new WeakMap<ResourceDef, TableColumns>();

/** The columns of a resource's Table (SPEC default when the kind has none of its own). */
export function tableColumnsFor(def: ResourceDef): TableColumns {
  if (def.custom) {
    let t = customTables.get(def);
    if (!t) customTables.set(def, (t = customColumns(def.custom.printerColumns)));
    return t;
  }
  return TABLES[`${def.group}/${def.resource}`] ?? DEFAULT_TABLE_COLUMNS;
}
