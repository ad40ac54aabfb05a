import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { SharedInformerFactory, type SharedInformer } from '@orch/client';
import { COMPONENT_CONTEXT } from '@orch/component';
import { NODES, PODS, SERVICES, type Node, type Pod, type Service } from './api/types';
import { NodeAgentOptions, type NodeAgentContext } from './options';

/**
 * The agent's informers, on one factory: the pods bound to its node(s), its Node(s), and (with
 * real processes) every Service, for the service link variables of containers, as the kubelet
 * watches them. Started once the nodes are registered (pods.module.ts); stopped last.
 */
@Injectable()
export class AgentInformers implements OnApplicationShutdown {
  private readonly factory: SharedInformerFactory;
  readonly pods: SharedInformer<Pod>;
  readonly nodes: SharedInformer<Node>;
  readonly services?: SharedInformer<Service>;

  constructor(@Inject(COMPONENT_CONTEXT) ctx: NodeAgentContext, @Inject(NodeAgentOptions) options: NodeAgentOptions) {
    this.factory = new SharedInformerFactory(ctx.client);
    const { simulated, hostname } = options;
    this.pods = this.factory.informerFor<Pod>(PODS, { fieldSelector: simulated ? 'spec.nodeName!=' : `spec.nodeName=${hostname}` });
    this.nodes = this.factory.informerFor<Node>(NODES, simulated ? {} : { fieldSelector: `metadata.name=${hostname}` });
    this.services = simulated ? undefined : this.factory.informerFor<Service>(SERVICES);
  }

  start(): void {
    this.factory.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.factory.shutdown();
  }
}
