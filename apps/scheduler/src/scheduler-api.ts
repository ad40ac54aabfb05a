import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { KubeObject } from '@orch/apimachinery';
import { EventRecorder } from '@orch/client';
import { COMPONENT_CONTEXT } from '@orch/component';
import { DEFAULT_SCHEDULER_NAME, type BindFunction, type Pod, type PodCondition, type SchedulerCallbacks, type SchedulerEvent } from './framework';
import type { SchedulerComponent } from './options';
import { PODS } from './resources';

/** How long a stopping scheduler waits for its last events to be written. */
const EVENT_FLUSH_MS = 2000;

/**
 * What the scheduler core asks of the API, through the scheduler's client: the binder
 * (`pods/binding`), the preemptor (deletes the victims), the PodScheduled condition and
 * nomination (`pods/status` merge patch) and the pods' events (reporting as
 * `default-scheduler`, flushed at shutdown).
 */
@Injectable()
export class SchedulerApi implements SchedulerCallbacks, OnApplicationShutdown {
  private readonly recorder: EventRecorder;

  constructor(@Inject(COMPONENT_CONTEXT) private readonly component: SchedulerComponent) {
    this.recorder = new EventRecorder({ client: component.client, reportingController: DEFAULT_SCHEDULER_NAME, reportingInstance: component.identity });
  }

  private pods(namespace: string | undefined) {
    return this.component.client.resource<Pod & KubeObject>(PODS, namespace);
  }

  /** Creates the Binding (`pods/binding`) that assigns a pod to a node. */
  readonly bind: BindFunction = async (pod, nodeName) => {
    await this.pods(pod.metadata.namespace).createSubresource(pod.metadata.name!, 'binding', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
      target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
    });
  };

  /** Deletes the victims preemption chose (one already gone is no error). */
  readonly preempt = async (_pod: Pod, _node: string, victims: Pod[]): Promise<void> => {
    await Promise.all(victims.map((v) => this.pods(v.metadata.namespace).delete(v.metadata.name!, {}).catch(() => undefined)));
  };

  readonly updatePodStatus = async (pod: Pod, condition: PodCondition, nominatedNodeName?: string): Promise<void> => {
    const conditions = [...(pod.status?.conditions ?? []).filter((c) => c.type !== condition.type), condition];
    const status: Record<string, unknown> = { conditions };
    if (nominatedNodeName !== undefined) status.nominatedNodeName = nominatedNodeName || null;
    await this.pods(pod.metadata.namespace).patch(pod.metadata.name!, 'merge', { status }, { subresource: 'status' });
  };

  readonly recordEvent = (e: SchedulerEvent): void => {
    const { name, namespace, uid } = e.pod.metadata;
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', name: name!, namespace: namespace!, uid }, e.type, e.reason, e.reason === 'Scheduled' ? 'Binding' : 'Scheduling', e.message);
  };

  readonly onError = (message: string, err: unknown): void => {
    this.component.logger.error(message, { err: String(err) });
  };

  async onApplicationShutdown(): Promise<void> {
    await this.recorder.stop(EVENT_FLUSH_MS);
  }
}
