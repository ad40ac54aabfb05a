import type { CycleState } from '../../framework/cycle-state';
import type { BindPlugin, Handle, PluginFactory } from '../../framework/interface';
import { Status } from '../../framework/status';
import type { PodInfo } from '../../framework/types';
import { DEFAULT_BINDER } from '../names';

/** Bind through the injected bind function (the `pods/binding` subresource, upstream DefaultBinder). */
export class DefaultBinder implements BindPlugin {
  readonly name = DEFAULT_BINDER;

  constructor(private readonly handle: Handle) {}

  async bind(_state: CycleState, pod: PodInfo, nodeName: string): Promise<Status> {
    const bindFn = this.handle.bindFunction;
    if (!bindFn) return Status.error('no bind function configured');
    try {
      await bindFn(pod.pod, nodeName);
      return Status.success();
    } catch (e) {
      return Status.error(e);
    }
  }
}

export const newDefaultBinder: PluginFactory = (_args, handle) => new DefaultBinder(handle);
