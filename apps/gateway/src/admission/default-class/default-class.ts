import { Injectable } from '@nestjs/common';
import type { KubeObject } from '@orch/apimachinery';
import { AdmissionPluginProvider, handling, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import { StateAdmissionPlugin } from '../admission-state';
import type { Ingress, PersistentVolumeClaim } from '../api';
import { annotation, brandSpellings, newest } from '../namespace-annotations';

export const DEFAULT_STORAGE_CLASS = 'DefaultStorageClass';
export const DEFAULT_INGRESS_CLASS = 'DefaultIngressClass';

/** SPEC well-known annotations marking the default class (orch and upstream spellings). */
export const STORAGE_CLASS_DEFAULT_KEYS = [...brandSpellings('storageclass.orch.io/is-default-class'), 'storageclass.beta.kubernetes.io/is-default-class'];
export const INGRESS_CLASS_DEFAULT_KEYS = brandSpellings('ingressclass.orch.io/is-default-class');

/** The default class among `classes` (annotation "true"); the newest when several are marked. */
export function defaultClass(classes: readonly KubeObject[], keys: readonly string[]): KubeObject | undefined {
  return newest(classes.filter((c) => annotation(c, keys) === 'true'));
}

/**
 * DefaultStorageClass (upstream plugin of the same name): a PersistentVolumeClaim created
 * without spec.storageClassName gets the default StorageClass (an empty string is an explicit
 * "no class" and stays).
 */
@AdmissionPluginProvider()
@Injectable()
export class DefaultStorageClass extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = DEFAULT_STORAGE_CLASS;

  readonly handles = handling({ CREATE: ['persistentvolumeclaims'] });

  mutate(a: AdmissionAttributes): void {
    const claim = a.object as PersistentVolumeClaim | undefined;
    if (!claim || (claim.spec?.storageClassName !== undefined && claim.spec.storageClassName !== null)) return;
    const found = defaultClass(this.state.cache('storage.orch.io', 'storageclasses').list(), STORAGE_CLASS_DEFAULT_KEYS);
    if (found) claim.spec = { ...(claim.spec ?? {}), storageClassName: found.metadata.name };
  }
}

/**
 * DefaultIngressClass (upstream plugin of the same name): an Ingress created without
 * spec.ingressClassName (and without the legacy kubernetes.io/ingress.class annotation) gets
 * the default IngressClass.
 */
@AdmissionPluginProvider()
@Injectable()
export class DefaultIngressClass extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = DEFAULT_INGRESS_CLASS;

  readonly handles = handling({ CREATE: ['ingresses.networking.orch.io'] });

  mutate(a: AdmissionAttributes): void {
    const ingress = a.object as Ingress | undefined;
    if (!ingress || ingress.spec?.ingressClassName || ingress.metadata.annotations?.['kubernetes.io/ingress.class'] !== undefined) return;
    const found = defaultClass(this.state.cache('networking.orch.io', 'ingressclasses').list(), INGRESS_CLASS_DEFAULT_KEYS);
    if (found) ingress.spec = { ...(ingress.spec ?? {}), ingressClassName: found.metadata.name };
  }
}
