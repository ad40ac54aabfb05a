import { Quantity } from '@orch/apimachinery';
import type { ConfigMap, Container, ObjectFieldSelector, Pod, ResourceFieldSelector, Secret } from '../../api/types';

/** Where env and volume sources are read from (the gateway, through the agent's client). */
export interface ObjectSource {
  /** The config map, or undefined when it does not exist. */
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  /** The secret, or undefined when it does not exist. */
  secret(namespace: string, name: string): Promise<Secret | undefined>;
}

/** A container cannot be configured (upstream CreateContainerConfigError). */
export class ContainerConfigError extends Error {
  override name = 'ContainerConfigError';
}

/** Pod facts that env vars and downward API files refer to. */
export interface PodFacts {
  podIP: string;
  hostIP: string;
  nodeName: string;
  /** Node allocatable, used for resource fields of containers without limits. */
  nodeAllocatable: Record<string, string>;
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/**
 * upstream expansion.Expand: `$(VAR)` is replaced by VAR's value when defined, `$$` is a
 * literal `$`, anything else is kept as written.
 */
export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const n = input[i + 1];
    if (n === '$') {
      out += '$';
      i++;
    } else if (n === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const v = lookup(name);
      out += v ?? `$(${name})`;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

/** The value of a downward API field path (env `fieldRef` and downwardAPI files). */
export function fieldValue(pod: Pod, facts: PodFacts, ref: ObjectFieldSelector): string {
  const path = ref.fieldPath;
  const sub = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (sub) return (sub[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[sub[2]] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
      return formatMap(pod.metadata.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata.annotations);
    case 'spec.nodeName':
      return facts.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP':
    case 'status.hostIPs':
      return facts.hostIP;
    case 'status.podIP':
    case 'status.podIPs':
      return facts.podIP;
  }
  throw new ContainerConfigError(`unsupported fieldPath ${JSON.stringify(path)}`);
}

/** Labels/annotations as the downward API writes them: sorted `key="value"` lines. */
function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

/**
 * The value of a resource field (`limits.cpu`, `requests.memory`, ...) divided by the divisor
 * and rounded up (upstream ExtractContainerResourceValue); a missing limit is the node's
 * allocatable.
 */
export function resourceFieldValue(pod: Pod, container: Container | undefined, facts: PodFacts, ref: ResourceFieldSelector): string {
  const c = ref.containerName ? pod.spec.containers.find((x) => x.name === ref.containerName) : container;
  if (!c) throw new ContainerConfigError(`container ${JSON.stringify(ref.containerName)} named by resourceFieldRef not found`);
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(ref.resource);
  if (!m) throw new ContainerConfigError(`unsupported resource ${JSON.stringify(ref.resource)}`);
  const [, kind, name] = m;
  const given = kind === 'limits' ? c.resources?.limits?.[name] : (c.resources?.requests?.[name] ?? c.resources?.limits?.[name]);
  const fallback = kind === 'limits' ? facts.nodeAllocatable[name] : '0';
  const value = Quantity.parse(given ?? fallback ?? '0');
  const divisor = Quantity.parse(ref.divisor ?? '1');
  if (divisor.isZero()) throw new ContainerConfigError(`divisor of ${ref.resource} must not be zero`);
  if (name === 'cpu') return String(Math.ceil(value.milliValue() / divisor.milliValue()));
  return String(Math.ceil(value.asApproximateFloat() / divisor.asApproximateFloat()));
}

function decoded(secret: Secret, key: string): string | undefined {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

function configMapValue(cm: ConfigMap, key: string): string | undefined {
  if (cm.data && key in cm.data) return cm.data[key];
  const b = cm.binaryData?.[key];
  return b === undefined ? undefined : Buffer.from(b, 'base64').toString('utf8');
}

/**
 * The environment of a container (upstream makeEnvironmentVariables): the agent's own
 * variables (`base`, e.g. POD_IP), then `envFrom` sources in order, then `env` entries in order;
 * later entries win. `$(VAR)` in values refers to variables defined before. Missing required
 * config maps, secrets or keys throw {@link ContainerConfigError}.
 */
export async function containerEnv(pod: Pod, container: Container, facts: PodFacts, source: ObjectSource, base: Record<string, string>): Promise<Record<string, string>> {
  const ns = pod.metadata.namespace ?? 'default';
  const env: Record<string, string> = { ...base };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const name = from.configMapRef.name ?? '';
      const cm = await source.configMap(ns, name);
      if (!cm) {
        if (from.configMapRef.optional) continue;
        throw new ContainerConfigError(`configmap "${name}" not found`);
      }
      for (const key of Object.keys({ ...cm.binaryData, ...cm.data })) if (ENV_NAME.test(prefix + key)) env[prefix + key] = configMapValue(cm, key)!;
    }
    if (from.secretRef) {
      const name = from.secretRef.name ?? '';
      const s = await source.secret(ns, name);
      if (!s) {
        if (from.secretRef.optional) continue;
        throw new ContainerConfigError(`secret "${name}" not found`);
      }
      for (const key of Object.keys(s.data ?? {})) if (ENV_NAME.test(prefix + key)) env[prefix + key] = decoded(s, key)!;
    }
  }
  for (const v of container.env ?? []) {
    const vf = v.valueFrom;
    if (!vf) {
      env[v.name] = expandVars(v.value ?? '', (n) => env[n]);
      continue;
    }
    if (vf.fieldRef) env[v.name] = fieldValue(pod, facts, vf.fieldRef);
    else if (vf.resourceFieldRef) env[v.name] = resourceFieldValue(pod, container, facts, vf.resourceFieldRef);
    else if (vf.configMapKeyRef) {
      const ref = vf.configMapKeyRef;
      const cm = await source.configMap(ns, ref.name ?? '');
      const value = cm && configMapValue(cm, ref.key);
      if (value === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError(cm ? `couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name}` : `configmap "${ref.name}" not found`);
      }
      env[v.name] = value;
    } else if (vf.secretKeyRef) {
      const ref = vf.secretKeyRef;
      const s = await source.secret(ns, ref.name ?? '');
      const value = s && decoded(s, ref.key);
      if (value === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError(s ? `couldn't find key ${ref.key} in Secret ${ns}/${ref.name}` : `secret "${ref.name}" not found`);
      }
      env[v.name] = value;
    }
  }
  return env;
}
