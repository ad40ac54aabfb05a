import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { groupVersionString, type Catalog } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { Authorizer } from '@orch/auth';
import type { Logger } from '@orch/server-common';
import { Gateway } from '../gateway';
import type { GatewayOptions } from '../options';
import type { GenericStore } from '../registry/generic-store';
import type { RequestContext } from '../registry/strategy';
import type { WebhookClient } from '../webhooks/webhook-client';
import type { AdmissionAttributes, AdmissionResource } from '../pipeline/admit';
import { forgetActivation, type VersionedAttributes } from './admission-request';
import type { MatchedAs } from './matching';
import { readAdmissionConfiguration } from './admission-config';
import { ObjectCache } from './object-cache';

/** The identity admission uses for its own writes (quota usage). */
export const ADMISSION_CONTEXT: RequestContext = {
  user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] },
  namespace: '',
  dryRun: false,
  warnings: [],
};

/**
 * What admission plugins read of the cluster: cached objects of a resource (this replica's
 * watch cache, decoded once; see ObjectCache) for the objects plugins consult on every request
 * (namespaces, limit ranges, classes, webhook configurations, policies), and the registries
 * for reads that must see the store's latest state and for writes (quota usage).
 */
@Injectable()
export class AdmissionState implements OnApplicationShutdown {
  /** Object caches by group, then resource (two lookups of the callers' own strings: no key made per call). */
  private readonly caches = new Map<string, Map<string, ObjectCache>>();
  /** Plugin name → configuration, from --admission-control-config-file (read once; an unusable file fails start-up). */
  private readonly pluginConfigurations: Map<string, unknown>;

  constructor(@Inject(Gateway) private readonly gateway: Gateway) {
    this.pluginConfigurations = readAdmissionConfiguration(gateway.options['admission-control-config-file']);
  }

  /**
   * A plugin's configuration: the document the admission configuration file gives plugin
   * `name` (undefined when none), read by `parse`, which names `where` in its errors.
   */
  pluginConfigurationOf<T>(name: string, parse: (document: unknown, where: string) => T): T {
    return parse(this.pluginConfigurations.get(name), `${this.gateway.options['admission-control-config-file']}: plugin ${name}`);
  }

  /** The plugins the admission configuration file configures. */
  get configuredPlugins(): string[] {
    return [...this.pluginConfigurations.keys()];
  }

  get options(): GatewayOptions {
    return this.gateway.options;
  }

  get catalog(): Catalog {
    return this.gateway.catalog;
  }

  get logger(): Logger {
    return this.gateway.logger;
  }

  /** The gateway's webhook caller (HTTPS, caBundle, Services through their endpoints). */
  get webhooks(): WebhookClient {
    return this.gateway.webhooks;
  }

  /** The request path's authorizer (available once the pipeline is wired). */
  get authorizer(): Authorizer {
    const a = this.gateway.authorizer;
    if (!a) throw new Error('the authorizer is not wired yet');
    return a;
  }

  registry(group: string, resource: string): GenericStore {
    return this.gateway.registry(group, resource);
  }

  /** The store serving one version of a resource (custom resources convert through their own). */
  private storeOf(r: AdmissionResource): GenericStore {
    for (const [def, store] of this.gateway.registries) if (def.group === r.group && def.version === r.version && def.resource === r.resource) return store;
    throw StatusError.internal(`unable to convert to ${r.resource}.${r.group || 'core'}/${r.version}: not served`);
  }

  /**
   * The request as a hook that matched it as `matched` sees it: the request itself when that
   * is its own kind, else with `object` and `oldObject` converted to the matched kind's
   * version (matchPolicy Equivalent; upstream VersionedAttributes). The request itself comes
   * back synchronously; a converted one, as a promise.
   */
  versioned(a: AdmissionAttributes, matched: MatchedAs): VersionedAttributes | Promise<VersionedAttributes> {
    const k = matched.kind;
    if (k.group === a.kind.group && k.version === a.kind.version && k.kind === a.kind.kind) return a;
    return this.converted(a, matched);
  }

  /** The request with its objects converted to the matched kind's version (see {@link versioned}). */
  private async converted(a: AdmissionAttributes, matched: MatchedAs): Promise<VersionedAttributes> {
    const k = matched.kind;
    const store = this.storeOf(matched.resource);
    const apiVersion = groupVersionString(k);
    const convert = (o: KubeObject | undefined) => (o ? store.convertTo(o, apiVersion) : undefined);
    const [object, oldObject] = await Promise.all([convert(a.object), convert(a.oldObject)]);
    return { ...a, object, oldObject, resource: matched.resource, kind: k, requested: { resource: a.resource, kind: a.kind } };
  }

  /** Writes a hook's change to a versioned object back into the request's object (converted to the request's version, in place). */
  async applyVersioned(a: AdmissionAttributes, changed: KubeObject): Promise<void> {
    const back = await this.storeOf(a.resource).convertTo(changed, groupVersionString(a.kind));
    const target = a.object as Record<string, unknown>;
    for (const key of Object.keys(target)) delete target[key];
    Object.assign(target, back);
    forgetActivation(a);
  }

  /** The cached objects of a resource, started on first use. */
  cache<T extends KubeObject = KubeObject>(group: string, resource: string): ObjectCache<T> {
    let ofGroup = this.caches.get(group);
    if (!ofGroup) this.caches.set(group, (ofGroup = new Map()));
    let c = ofGroup.get(resource);
    if (!c) ofGroup.set(resource, (c = new ObjectCache(this.gateway.watchCache, this.registry(group, resource))));
    return c as ObjectCache<T>;
  }

  onApplicationShutdown(): void {
    for (const ofGroup of this.caches.values()) for (const c of ofGroup.values()) c.stop();
  }
}

/**
 * The base of the admission plugins that read the cluster through {@link AdmissionState}:
 * `state` is injected here, so a plugin declares no constructor; what it derives from the state
 * at start-up (its configuration, a webhook dispatcher) goes in field initializers.
 */
@Injectable()
export abstract class StateAdmissionPlugin {
  constructor(@Inject(AdmissionState) protected readonly state: AdmissionState) {}
}
