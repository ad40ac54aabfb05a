import { createLogger } from '@orch/server-common';
import { PodIpAllocator } from '../../node/pod-cidr';
import type { ProcessRuntimeOptions } from './process-runtime';

/**
 * Options of a process runtime for tests (not part of the agent): pods under `rootDir` with
 * addresses from `podCidr`, no config maps, secrets or tokens, quiet logs, restarts after
 * 300 ms (doubling to 1 s); `overrides` win.
 */
export function testRuntimeOptions(rootDir: string, podCidr: string, overrides: Partial<ProcessRuntimeOptions> = {}): ProcessRuntimeOptions {
  return {
    rootDir,
    nodeName: 'n1',
    hostIP: '127.0.0.1',
    ips: new PodIpAllocator(podCidr),
    source: { configMap: async () => undefined, secret: async () => undefined },
    token: async () => undefined,
    rootCaPem: 'CA',
    nodeAllocatable: () => ({ cpu: '2', memory: '1Gi' }),
    entrypoints: new Map(),
    log: { maxBytes: 1 << 20, maxFiles: 2 },
    backoff: { initialMs: 300, maxMs: 1000 },
    syncFrequencyMs: 60_000,
    logger: createLogger('test', { level: 'error' }),
    onChange: () => undefined,
    event: () => undefined,
    ...overrides,
  };
}
