import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { SharedInformerFactory, unwrapTombstone, type DeletedFinalStateUnknown, type SharedInformer } from '@orch/client';
import type { coreV1, Namespace, Served } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { ANNOTATION_NAMESPACE_NODE_SELECTOR, PriorityResolver, Scheduler, type NamespaceLister, type Node, type Pod, type PriorityClass } from './framework';
import { NAMESPACES, NODES, PODS, PRIORITY_CLASSES } from './resources';

type Labels = Record<string, string>;

/**
 * The namespaces' labels (pod affinity `namespaceSelector`) and their
 * `scheduler.alpha.orch.io/node-selector` annotations, as the namespace informer last saw them.
 */
@Injectable()
export class NamespaceIndex implements NamespaceLister {
  private readonly selectors = new Map<string, string | undefined>();
  private readonly labelsByName = new Map<string, Labels>();

  labels(name: string): Labels | undefined {
    return this.labelsByName.get(name);
  }

  list(): { name: string; labels: Labels }[] {
    return [...this.labelsByName].map(([name, labels]) => ({ name, labels }));
  }

  /** The node selector annotation of namespace `name`, if any. */
  nodeSelector(name: string): string | undefined {
    return this.selectors.get(name);
  }

  /** Records a namespace; true when the node selector of a namespace seen before changed. */
  set(ns: coreV1.Namespace): boolean {
    const name = ns.metadata.name!;
    const selector = ns.metadata.annotations?.[ANNOTATION_NAMESPACE_NODE_SELECTOR];
    const changed = this.selectors.has(name) && this.selectors.get(name) !== selector;
    this.selectors.set(name, selector);
    this.labelsByName.set(name, { ...(ns.metadata.labels ?? {}) });
    return changed;
  }

  delete(name: string): void {
    this.selectors.delete(name);
    this.labelsByName.delete(name);
  }
}

/** Hands an informer's events to `handlers` (delete tombstones unwrapped). */
function onEvents<T extends KubeObject>(informer: SharedInformer<T>, handlers: { add(obj: T): void; update(old: T, obj: T): void; delete(obj: T): void }): void {
  informer.addEventHandler({
    onAdd: (obj) => handlers.add(obj),
    onUpdate: (old, obj) => handlers.update(old, obj),
    onDelete: (obj: T | DeletedFinalStateUnknown<T>) => handlers.delete(unwrapTombstone(obj)),
  });
}

/**
 * The scheduler's informer wiring: nodes and pods into the scheduler core's cache and queue,
 * namespaces into the {@link NamespaceIndex} (a changed node selector or labels may make
 * pending pods schedulable), PriorityClasses into the {@link PriorityResolver}. Handlers run
 * on every event and call the core directly. The informers stop at application shutdown.
 */
@Injectable()
export class SchedulerInformers implements OnApplicationShutdown {
  constructor(
    @Inject(SharedInformerFactory) readonly factory: SharedInformerFactory,
    @Inject(Scheduler) scheduler: Scheduler,
    @Inject(NamespaceIndex) namespaces: NamespaceIndex,
    @Inject(PriorityResolver) priorities: PriorityResolver,
  ) {
    onEvents(factory.informerFor<Served<Node>>(NODES), { add: (n) => scheduler.onNodeAdd(n), update: (o, n) => scheduler.onNodeUpdate(o, n), delete: (n) => scheduler.onNodeDelete(n) });
    onEvents(factory.informerFor<Served<Pod>>(PODS), { add: (p) => scheduler.onPodAdd(p), update: (o, p) => scheduler.onPodUpdate(o, p), delete: (p) => scheduler.onPodDelete(p) });
    const onNamespace = (old: Labels | undefined, ns: coreV1.Namespace) => {
      const selectorChanged = namespaces.set(ns);
      scheduler.onNamespaceChange(old, ns.metadata.labels ?? {}, selectorChanged);
    };
    onEvents(factory.informerFor<Namespace>(NAMESPACES), {
      add: (ns) => onNamespace(undefined, ns),
      update: (old, ns) => onNamespace(old.metadata.labels ?? {}, ns),
      delete: (ns) => namespaces.delete(ns.metadata.name!),
    });
    onEvents(factory.informerFor<Served<PriorityClass>>(PRIORITY_CLASSES), {
      add: (pc) => priorities.set(pc),
      update: (_old, pc) => priorities.set(pc),
      delete: (pc) => priorities.delete(pc.metadata.name!),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.factory.shutdown();
  }
}
