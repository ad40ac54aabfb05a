import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { StatusError } from '@orch/apimachinery';
import { AdmissionPluginProvider, handling, admissionDenied, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import type { coreV1 } from '@orch/api';
import { StateAdmissionPlugin } from '../admission-state';
import type * as api from '../api';
import type { AdmittedPod } from '../api';
import { annotation } from '../namespace-annotations';

export const SERVICE_ACCOUNT = 'ServiceAccount';
export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** Where pods find their service-account credentials (SPEC), and where stock in-cluster clients read them. */
export const SERVICE_ACCOUNT_MOUNT_PATHS = ['/var/run/secrets/orch.io/serviceaccount', '/var/run/secrets/kubernetes.io/serviceaccount'] as const;
/** Prefix of the name of the volume the plugin adds (upstream kube-api-access-<5 random>). */
export const API_ACCESS_VOLUME_PREFIX = 'orch-api-access-';
/** The config map holding the cluster's root CA in every namespace. */
export const ROOT_CA_CONFIGMAP = 'orch-root-ca.crt';
/** Token lifetime of the projected volume (upstream's 1 hour + 7 s, so tokens can be told apart as bound). */
export const TOKEN_EXPIRATION_SECONDS = 3607;
/** SPEC well-known annotations, orch and upstream spellings. */
const ENFORCE_MOUNTABLE_SECRETS = ['orch.io/enforce-mountable-secrets', 'kubernetes.io/enforce-mountable-secrets'];
const MIRROR_ANNOTATIONS = ['orch.io/config.mirror', 'kubernetes.io/config.mirror'];
/** How often a missing `default` account is looked up in the store before a pod is refused (upstream's 10). */
export const DEFAULT_ACCOUNT_ATTEMPTS = 10;

/** What the plugin reads of a pod spec: the generated PodSpec, any part possibly absent (a body as admitted). */
export type AdmittedPodSpec = NonNullable<AdmittedPod['spec']>;
type Container = coreV1.Container | coreV1.EphemeralContainer;

/** The projected volume of a pod's API credentials: a bound token, the root CA and the namespace (SPEC "Service account tokens" 1). */
export function apiAccessVolume(name: string): coreV1.Volume {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

/** Whether the token is mounted: the pod's automountServiceAccountToken, else the account's, else yes (upstream shouldAutomount). */
export function shouldAutomount(account: api.ServiceAccount, spec: AdmittedPodSpec): boolean {
  return spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true;
}

/**
 * Adds the API-access volume to the pod and mounts it read-only at each service-account path
 * in every container and init container that has no mount there (upstream
 * mountServiceAccountToken; ephemeral containers get none). A volume the plugin added before
 * (its name prefix) is reused. `suffix` names a new volume.
 */
export function mountServiceAccountToken(spec: AdmittedPodSpec, suffix: string): void {
  const existing = (spec.volumes ?? []).find((v) => v.name.startsWith(API_ACCESS_VOLUME_PREFIX));
  const volumeName = existing?.name ?? `${API_ACCESS_VOLUME_PREFIX}${suffix}`;
  let needed = false;
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    for (const mountPath of SERVICE_ACCOUNT_MOUNT_PATHS) {
      if ((c.volumeMounts ?? []).some((m) => m.mountPath === mountPath)) continue;
      (c.volumeMounts ??= []).push({ name: volumeName, readOnly: true, mountPath });
      needed = true;
    }
  }
  if (needed && !existing) (spec.volumes ??= []).push(apiAccessVolume(volumeName));
}

/**
 * With `orch.io/enforce-mountable-secrets: "true"` on the account, the first secret the pod
 * uses that the account does not list (upstream limitSecretReferences): secret volumes,
 * secretKeyRef env vars and envFrom secretRefs of (init, ephemeral) containers, and
 * imagePullSecrets against the account's imagePullSecrets. Undefined when all are allowed.
 */
export function unmountableSecret(account: api.ServiceAccount, spec: AdmittedPodSpec, containers: 'all' | 'ephemeral' = 'all'): string | undefined {
  if (annotation(account, ENFORCE_MOUNTABLE_SECRETS) !== 'true') return undefined;
  const sa = account.metadata.name;
  const mountable = new Set((account.secrets ?? []).map((s) => s.name));
  const notReferenced = `is not allowed because service account ${sa} does not reference that secret`;
  const groups: [string, Container[] | undefined][] = containers === 'ephemeral' ? [['ephemeral container', spec.ephemeralContainers]] : [['init container', spec.initContainers], ['container', spec.containers], ['ephemeral container', spec.ephemeralContainers]];
  if (containers === 'all') {
    for (const v of spec.volumes ?? []) {
      if (v.secret && !mountable.has(v.secret.secretName)) return `volume with secret.secretName="${v.secret.secretName ?? ''}" ${notReferenced}`;
    }
  }
  for (const [kind, list] of groups) {
    for (const c of list ?? []) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref && !mountable.has(ref.name)) return `${kind} ${c.name} with envVar ${e.name} referencing secret.secretName="${ref.name ?? ''}" ${notReferenced}`;
      }
      for (const e of c.envFrom ?? []) {
        if (e.secretRef && !mountable.has(e.secretRef.name)) return `${kind} ${c.name} with envFrom referencing secret.secretName="${e.secretRef.name ?? ''}" ${notReferenced}`;
      }
    }
  }
  if (containers === 'all') {
    const pullable = new Set((account.imagePullSecrets ?? []).map((s) => s.name));
    const i = (spec.imagePullSecrets ?? []).findIndex((s) => !pullable.has(s.name));
    if (i >= 0) return `imagePullSecrets[${i}].name="${spec.imagePullSecrets![i].name ?? ''}" is not allowed because service account ${sa} does not reference that imagePullSecret`;
  }
  return undefined;
}

const isMirror = (pod: AdmittedPod) => MIRROR_ANNOTATIONS.some((k) => pod.metadata.annotations?.[k] !== undefined);
const usesSecrets = (spec: AdmittedPodSpec) =>
  (spec.volumes ?? []).some((v) => v.secret || v.projected?.sources?.some((s) => s.secret)) ||
  [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])].some((c) => c.env?.some((e) => e.valueFrom?.secretKeyRef) || c.envFrom?.some((e) => e.secretRef));

/**
 * api.ServiceAccount (upstream plugin of the same name; SPEC "Admission of a pod"): a pod without
 * serviceAccountName runs as `default`; a pod naming an account that does not exist is
 * refused; unless automountServiceAccountToken is false on the pod or the account, a projected
 * volume (bound token, `orch-root-ca.crt`, namespace) is added and mounted at
 * /var/run/secrets/orch.io/serviceaccount and /var/run/secrets/kubernetes.io/serviceaccount
 * (where stock in-cluster clients read it) in each container without a mount there; the
 * account's imagePullSecrets go to a pod with none; `orch.io/enforce-mountable-secrets`
 * limits the pod's secrets to the account's. Mirror pods may use neither accounts nor secrets.
 *
 * The account is looked up as upstream's getServiceAccount does: this replica's cache, then the
 * store; the `default` account, which the controller-manager's serviceaccount controller makes
 * in every namespace, is asked for up to DEFAULT_ACCOUNT_ATTEMPTS times (a namespace created a
 * moment ago may not have it yet) before the pod is refused (403, "error looking up service
 * account <ns>/<name>: serviceaccount "<name>" not found").
 */
@AdmissionPluginProvider()
@Injectable()
export class ServiceAccount extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = SERVICE_ACCOUNT;

  readonly handles = handling({ CREATE: ['pods'], UPDATE: ['pods/ephemeralcontainers'] });

  async mutate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as AdmittedPod | undefined;
    if (!pod || a.operation !== 'CREATE' || isMirror(pod)) return;
    const spec = (pod.spec ??= {});
    if (!spec.serviceAccountName) spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT;
    const account = await this.account(a, spec.serviceAccountName);
    if (shouldAutomount(account, spec)) mountServiceAccountToken(spec, randomBytes(4).readUInt32BE(0).toString(36).slice(-5).padStart(5, '0'));
    if (!spec.imagePullSecrets?.length && account.imagePullSecrets?.length) spec.imagePullSecrets = account.imagePullSecrets.map((s) => ({ name: s.name }));
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as AdmittedPod | undefined;
    if (!pod) return;
    const spec = pod.spec ?? {};
    if (a.operation === 'CREATE' && isMirror(pod)) {
      if (spec.serviceAccountName) throw admissionDenied(a, 'a mirror pod may not reference service accounts');
      if (usesSecrets(spec)) throw admissionDenied(a, 'a mirror pod may not reference secrets');
      return;
    }
    if (!spec.serviceAccountName) throw admissionDenied(a, `no service account specified for pod ${a.namespace}/${a.name}`);
    const account = await this.account(a, spec.serviceAccountName);
    const bad = unmountableSecret(account, spec, a.operation === 'CREATE' ? 'all' : 'ephemeral');
    if (bad) throw admissionDenied(a, bad);
  }

  /**
   * The pod's account: the cache, then the store (once, or DEFAULT_ACCOUNT_ATTEMPTS times for
   * `default`, one random 100-199 ms pause between tries, as upstream); a missing account
   * refuses the pod, any other error of the lookup too.
   */
  private async account(a: AdmissionAttributes, name: string): Promise<api.ServiceAccount> {
    const cached = this.state.cache<api.ServiceAccount>('', 'serviceaccounts').get(a.namespace, name);
    if (cached) return cached;
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
    const pauseMs = 100 + Math.floor(Math.random() * 100);
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await sleep(pauseMs);
      try {
        return (await this.state.registry('', 'serviceaccounts').get(a.namespace, name)) as api.ServiceAccount;
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw admissionDenied(a, `error looking up service account ${a.namespace}/${name}: ${(e as Error).message}`);
      }
    }
    throw admissionDenied(a, `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
  }
}
