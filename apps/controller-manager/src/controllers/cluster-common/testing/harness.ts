// Test-only: runs a cluster controller against the in-memory API peer of libs/client.
import { Catalog } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { EventRecorder, RestClient, SharedInformerFactory } from '@orch/client';
import { createLogger } from '@orch/server-common';
import { ApiPeer } from '@orch/testing';
import type { Controller, ControllerContext, ControllerOptions } from '../../../controller';

export { ApiPeer };

/** A controller context wired to a fresh {@link ApiPeer}; `stop()` tears everything down. */
export interface Harness {
  peer: ApiPeer;
  ctx: ControllerContext;
  /** Log lines the controllers wrote. */
  logs: string[];
  /** Runs `controller` (as main.ts does: run, then start informers) until `stop()`. */
  start(controller: Controller): void;
  stop(): Promise<void>;
}

export async function startHarness(options: Partial<ControllerOptions> = {}): Promise<Harness> {
  const peer = await ApiPeer.start();
  const client = new RestClient({ server: peer.url }, { component: 'test', timeoutMs: 5000 });
  const informers = new SharedInformerFactory(client, { informer: { logger: { info: () => undefined, warn: () => undefined, error: () => undefined } } });
  const logs: string[] = [];
  const recorders: EventRecorder[] = [];
  const ctx: ControllerContext = {
    client,
    informers,
    catalog: new Catalog(),
    recorder: (reportingController) => {
      const r = new EventRecorder({ client, reportingController, reportingInstance: 'test', logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
      recorders.push(r);
      return r;
    },
    logger: createLogger('test', { level: 'debug', write: (line) => logs.push(line) }),
    options: { workers: 2, rootCaPem: 'ROOT CA PEM\n', nodeMonitorGracePeriodMs: 40_000, terminatedPodGcThreshold: 12500, k8sCompatibility: true, ...options },
  };
  const abort = new AbortController();
  const running: Promise<void>[] = [];
  return {
    peer,
    ctx,
    logs,
    start(controller) {
      running.push(controller.run(abort.signal));
      informers.start();
    },
    async stop() {
      abort.abort();
      await Promise.all(running);
      await informers.shutdown();
      await Promise.all(recorders.map((r) => r.stop(100)));
      client.close();
      await peer.stop();
    },
  };
}

/**
 * Teaches the peer the cluster-scoped namespace subresources `namespaces/<n>/status` and
 * `/finalize` (it would read them as a resource inside namespace <n>): PUTs write the status,
 * respectively spec.finalizers, of the stored namespace.
 */
export function serveNamespaceSubresources(peer: ApiPeer): void {
  peer.intercept((req) => {
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/(status|finalize)$/.exec(req.path);
    if (!m || req.method !== 'PUT') return undefined;
    const current = storedObject<KubeObject>(peer, '/v1/namespaces', m[1]);
    if (!current) return { status: 404, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 404, reason: 'NotFound', message: `namespaces "${m[1]}" not found` } };
    const body = JSON.parse(req.body) as KubeObject;
    const next = m[2] === 'status' ? { ...current, status: body['status'] } : { ...current, spec: { ...(current['spec'] as object), finalizers: (body['spec'] as { finalizers?: string[] })?.finalizers } };
    return { status: 200, body: peer.put('/v1/namespaces', next) };
  });
}

export { eventually } from '@orch/testing';

/** The stored object `name` (and `namespace`) of `gvr` (`group/version/resource`), if any. */
export function storedObject<T extends KubeObject>(peer: ApiPeer, gvr: string, name: string, namespace?: string): T | undefined {
  return peer.stored(gvr).find((o) => o.metadata.name === name && o.metadata.namespace === namespace) as T | undefined;
}
