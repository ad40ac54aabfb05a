import type { KubeObject } from '@orch/apimachinery';
import { isNotFound, objectKey, type EventRecorder, type ResourceClient } from '@orch/client';
import type { Pod } from '../../framework/api';
import type { UIDTrackingExpectations } from '../../framework/expectations';

/**
 * upstream RealPodControl: creates and deletes a workload controller's pods through the API and
 * records upstream's events on the owner (SuccessfulCreate "Created pod: <name>", FailedCreate
 * "Error creating: <error>", SuccessfulDelete "Deleted pod: <name>", FailedDelete "Error deleting:
 * <error>"; a pod already gone records nothing). Expectations stay with the controller, except
 * in {@link deleteAll}.
 */
export class PodControl {
  constructor(
    private readonly client: ResourceClient<Pod>,
    private readonly recorder: () => EventRecorder,
  ) {}

  /** Creates `pod` for `owner`; the error (recorded) rejects. */
  async create(owner: KubeObject, pod: Pod): Promise<Pod> {
    try {
      const created = await this.client.create(pod);
      this.recorder().event(owner, 'Normal', 'SuccessfulCreate', 'Create', `Created pod: ${created.metadata.name}`);
      return created;
    } catch (err) {
      this.recorder().event(owner, 'Warning', 'FailedCreate', 'Create', `Error creating: ${(err as Error).message}`);
      throw err;
    }
  }

  /** Deletes `owner`'s `pod`; rejects with the error (a 404 too, unrecorded). */
  async delete(owner: KubeObject, pod: Pod): Promise<void> {
    try {
      await this.client.inNamespace(pod.metadata.namespace ?? '').delete(pod.metadata.name ?? '');
      this.recorder().event(owner, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted pod: ${pod.metadata.name}`);
    } catch (err) {
      if (!isNotFound(err)) this.recorder().event(owner, 'Warning', 'FailedDelete', 'Delete', `Error deleting: ${(err as Error).message}`);
      throw err;
    }
  }

  /**
   * Deletes `pods` of `owner` at once, their deletions already expected under `key`: a delete
   * that fails will never be observed, so it is marked observed. Rejects, once every delete
   * settled, with the first error other than 404.
   */
  async deleteAll(owner: KubeObject, pods: readonly Pod[], expectations: UIDTrackingExpectations, key: string): Promise<void> {
    const results = await Promise.allSettled(
      pods.map((pod) =>
        this.delete(owner, pod).catch((err: unknown) => {
          expectations.deletionObservedOf(key, objectKey(pod));
          if (!isNotFound(err)) throw err;
        }),
      ),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
