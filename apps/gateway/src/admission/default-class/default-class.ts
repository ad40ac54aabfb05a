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

/** How objects of one kind get the default class: the plugin, the class resource, and the object's class field. */
interface ClassDefaulting<T extends KubeObject> {
  plugin: string;
  /** The defaulted resource, as `handling` names it. */
  resource: string;
  classes: { group: string; resource: string };
  /** The annotations that mark the default class. */
  keys: readonly string[];
  /** Whether the object names its class (or explicitly none) already. */
  chosen(obj: T): boolean;
  setClass(obj: T, name: string | undefined): void;
}

/** The plugin that gives an object created without a class the default class ({@link defaultClass}) of `d`. */
function classDefaultingPlugin<T extends KubeObject>(d: ClassDefaulting<T>) {
  return class ClassDefaultingPlugin extends StateAdmissionPlugin implements AdmissionPlugin {
    readonly name = d.plugin;
    readonly handles = handling({ CREATE: [d.resource] });

    mutate(a: AdmissionAttributes): void {
      const obj = a.object as T | undefined;
      if (!obj || d.chosen(obj)) return;
      const found = defaultClass(this.state.cache(d.classes.group, d.classes.resource).list(), d.keys);
      if (found) d.setClass(obj, found.metadata.name);
    }
  };
}

const STORAGE_CLASS_DEFAULTING: ClassDefaulting<PersistentVolumeClaim> = {
  plugin: DEFAULT_STORAGE_CLASS,
  resource: 'persistentvolumeclaims',
  classes: { group: 'storage.orch.io', resource: 'storageclasses' },
  keys: STORAGE_CLASS_DEFAULT_KEYS,
  chosen: (claim) => claim.spec?.storageClassName !== undefined && claim.spec.storageClassName !== null,
  setClass: (claim, name) => void (claim.spec = { ...(claim.spec ?? {}), storageClassName: name }),
};

const INGRESS_CLASS_DEFAULTING: ClassDefaulting<Ingress> = {
  plugin: DEFAULT_INGRESS_CLASS,
  resource: 'ingresses.networking.orch.io',
  classes: { group: 'networking.orch.io', resource: 'ingressclasses' },
  keys: INGRESS_CLASS_DEFAULT_KEYS,
  chosen: (ingress) => !!ingress.spec?.ingressClassName || ingress.metadata.annotations?.['kubernetes.io/ingress.class'] !== undefined,
  setClass: (ingress, name) => void (ingress.spec = { ...(ingress.spec ?? {}), ingressClassName: name }),
};

/**
 * DefaultStorageClass (upstream plugin of the same name): a PersistentVolumeClaim created
 * without spec.storageClassName gets the default StorageClass (an empty string is an explicit
 * "no class" and stays).
 */
@AdmissionPluginProvider()
@Injectable()
export class DefaultStorageClass extends classDefaultingPlugin(STORAGE_CLASS_DEFAULTING) {}

/**
 * DefaultIngressClass (upstream plugin of the same name): an Ingress created without
 * spec.ingressClassName (and without the legacy kubernetes.io/ingress.class annotation) gets
 * the default IngressClass.
 */
@AdmissionPluginProvider()
@Injectable()
export class DefaultIngressClass extends classDefaultingPlugin(INGRESS_CLASS_DEFAULTING) {}
