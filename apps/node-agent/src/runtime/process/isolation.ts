import { join } from 'node:path';
import type { Container, Pod } from '../../api/types';
import type { ContainerKind } from '../runtime';
import { containerRoot } from './volumes';

/** What isolating one container instance needs to know. */
export interface ContainerContext {
  pod: Pod;
  /** `<root-dir>/pods/<uid>`. */
  podDir: string;
  podIP: string;
  kind: ContainerKind;
  container: Container;
  /** Host path of each volume of the pod. */
  volumes: Map<string, string>;
  /** Host pid of a running container whose process namespace this one joins (ephemeral `targetContainerName`). */
  sharePidWith?: number;
}

/** How a container looks from inside, and how to start its command. */
export interface ContainerView {
  /** The container's root as its processes see it (`ORCH_CONTAINER_ROOT`, default HOME). */
  root: string;
  /** The working directory as its processes see it. */
  workingDir: string;
  /** Where the termination message file is, on the host. */
  terminationLog: string;
  /** The host command line that runs `command` in the container, and the host working directory to spawn it in. */
  launch(command: string[]): Promise<{ argv: string[]; cwd: string }>;
}

/**
 * How containers are separated from the host and from each other. `process` runs them as
 * plain host processes; `sandbox` gives each pod its own namespaces and each container its
 * own view of the file system (see sandbox.ts). The runtime drives both the same way.
 */
export interface Isolation {
  readonly name: 'process' | 'sandbox';
  /** Sets up what the pod's containers share (idempotent; called on every sync). */
  preparePod(pod: Pod, podDir: string, podIP: string): Promise<void>;
  /** Prepares one container instance. */
  container(ctx: ContainerContext): Promise<ContainerView>;
  /** The host command line that runs `command` beside a live instance (exec, `tty` when in a terminal), and where. */
  exec(instancePid: number, cwd: string, command: string[], tty: boolean): Promise<{ argv: string[]; cwd: string }>;
  /** The host pid whose namespaces stand for the instance (to share its process namespace). */
  namespacePid(instancePid: number): Promise<number | undefined>;
  /** Releases what `preparePod` set up. */
  releasePod(uid: string, podDir: string): Promise<void>;
}

/** No isolation: host processes with a container root of symlinks to the volumes. */
export const hostIsolation: Isolation = {
  name: 'process',
  async preparePod() {},
  async container(ctx) {
    const root = await containerRoot(ctx.pod, ctx.podDir, ctx.container, ctx.volumes, ctx.kind);
    const workingDir = ctx.container.workingDir || root;
    return { root, workingDir, terminationLog: join(root, 'dev', 'termination-log'), launch: async (command) => ({ argv: command, cwd: workingDir }) };
  },
  async exec(_pid, cwd, command) {
    return { argv: command, cwd };
  },
  async namespacePid() {
    return undefined;
  },
  async releasePod() {},
};
