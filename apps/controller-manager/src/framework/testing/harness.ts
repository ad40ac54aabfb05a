// Test-only: runs controllers against the in-memory API peer of libs/client (the client's
// wire-format test server): `startHarness` runs whole controllers, `peerContext` drives their
// sync() directly.
import { Catalog } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { EventRecorder, RestClient, SharedInformerFactory, type InformerOptions } from '@orch/client';
import { createLogger } from '@orch/server-common';
import { ApiPeer } from '@orch/testing';
import type { Controller, ControllerContext, ControllerOptions } from '../controller';

export { ApiPeer };
export { eventually, waitFor } from '@orch/testing';

interface TestContext {
  peer: ApiPeer;
  client: RestClient;
  ctx: ControllerContext;
  /** Stops the informers and recorders, closes the client and the peer. */
  close(): Promise<void>;
}

/** A ControllerContext on a fresh ApiPeer, logging through `write` at `level`. */
async function testContext(options: Partial<ControllerOptions>, level: 'debug' | 'error', write: (line: string) => void, informer: Partial<InformerOptions> = {}): Promise<TestContext> {
  const peer = await ApiPeer.start();
  const client = new RestClient({ server: peer.url }, { component: 'test', timeoutMs: 5000 });
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const informers = new SharedInformerFactory(client, { informer: { logger: quiet, ...informer } });
  const recorders: EventRecorder[] = [];
  const ctx: ControllerContext = {
    client,
    informers,
    catalog: new Catalog(),
    recorder: (reportingController) => {
      const r = new EventRecorder({ client, reportingController, reportingInstance: 'test', logger: quiet });
      recorders.push(r);
      return r;
    },
    logger: createLogger('test', { level, write }),
    options: { workers: 2, rootCaPem: 'ROOT CA PEM\n', nodeMonitorGracePeriodMs: 40_000, terminatedPodGcThreshold: 12500, k8sCompatibility: true, ...options },
  };
  return {
    peer,
    client,
    ctx,
    async close() {
      await informers.shutdown();
      await Promise.all(recorders.map((r) => r.stop(100)));
      client.close();
      await peer.stop();
    },
  };
}

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
  const logs: string[] = [];
  const { peer, ctx, close } = await testContext(options, 'debug', (line) => logs.push(line));
  const informers = ctx.informers;
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
      await close();
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

/** The stored object `name` (and `namespace`) of `gvr` (`group/version/resource`), if any. */
export function storedObject<T extends KubeObject>(peer: ApiPeer, gvr: string, name: string, namespace?: string): T | undefined {
  return peer.stored(gvr).find((o) => o.metadata.name === name && o.metadata.namespace === namespace) as T | undefined;
}

/**
 * A ControllerContext on a fresh {@link ApiPeer} (one worker, deep-frozen informer objects) for
 * sync() tests of controllers. `stop()` ends everything.
 */
export interface PeerContext {
  peer: ApiPeer;
  ctx: ControllerContext;
  client: RestClient;
  /** Registers a controller so that stop() shuts its queue (and timers) down. */
  own<C extends Controller>(controller: C): C;
  /** Starts the informers and waits until they synced. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function peerContext(): Promise<PeerContext> {
  const { peer, client, ctx, close } = await testContext({ workers: 1, rootCaPem: '' }, 'error', () => undefined, { freeze: 'deep' });
  const controllers: Controller[] = [];
  return {
    peer,
    ctx,
    client,
    own(controller) {
      controllers.push(controller);
      return controller;
    },
    async start() {
      ctx.informers.start();
      await ctx.informers.waitForCacheSync();
    },
    async stop() {
      // run() with an aborted signal shuts the controller's queue down and stops its recorder.
      await Promise.all(controllers.map((c) => c.run(AbortSignal.abort())));
      await close();
    },
  };
}
