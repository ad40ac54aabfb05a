import type { coreV1 } from '@orch/api';
import { Quantity } from '@orch/apimachinery';
import type { ConfigMap, Container, Pod, Secret } from '../../api/types';

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
export function fieldValue(pod: Pod, facts: PodFacts, ref: coreV1.ObjectFieldSelector): string {
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
export function resourceFieldValue(pod: Pod, container: Container | undefined, facts: PodFacts, ref: coreV1.ResourceFieldSelector): string {
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

const fromBase64 = (v: string) => Buffer.from(v, 'base64').toString('utf8');
const decodeAll = (data: Record<string, string> | undefined) => Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, fromBase64(v)]));

/** The two kinds of objects env refers to, with the spellings of upstream's messages. */
type KeySourceKind = { kind: 'ConfigMap'; noun: 'configmap' } | { kind: 'Secret'; noun: 'secret' };
const CONFIG_MAP: KeySourceKind = { kind: 'ConfigMap', noun: 'configmap' };
const SECRET: KeySourceKind = { kind: 'Secret', noun: 'secret' };

/** The keys and (decoded) values of a config map (data over binaryData) or a secret; undefined when it does not exist. */
async function keyValues(source: ObjectSource, of: KeySourceKind, ns: string, name: string): Promise<Record<string, string> | undefined> {
  if (of.kind === 'ConfigMap') {
    const cm = await source.configMap(ns, name);
    return cm && { ...decodeAll(cm.binaryData), ...cm.data };
  }
  const secret = await source.secret(ns, name);
  return secret && decodeAll(secret.data);
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
    const [of, ref] = from.configMapRef ? [CONFIG_MAP, from.configMapRef] : [SECRET, from.secretRef];
    if (!ref) continue;
    const values = await keyValues(source, of, ns, ref.name ?? '');
    if (!values) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${of.noun} "${ref.name ?? ''}" not found`);
    }
    for (const [key, value] of Object.entries(values)) if (ENV_NAME.test(prefix + key)) env[prefix + key] = value;
  }
  for (const v of container.env ?? []) {
    const vf = v.valueFrom;
    if (!vf) {
      env[v.name] = expandVars(v.value ?? '', (n) => env[n]);
      continue;
    }
    if (vf.fieldRef) env[v.name] = fieldValue(pod, facts, vf.fieldRef);
    else if (vf.resourceFieldRef) env[v.name] = resourceFieldValue(pod, container, facts, vf.resourceFieldRef);
    else {
      const [of, ref] = vf.configMapKeyRef ? [CONFIG_MAP, vf.configMapKeyRef] : [SECRET, vf.secretKeyRef];
      if (!ref) continue;
      const values = await keyValues(source, of, ns, ref.name ?? '');
      const value = values && Object.hasOwn(values, ref.key) ? values[ref.key] : undefined;
      if (value === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError(values ? `couldn't find key ${ref.key} in ${of.kind} ${ns}/${ref.name}` : `${of.noun} "${ref.name}" not found`);
      }
      env[v.name] = value;
    }
  }
  return env;
}
