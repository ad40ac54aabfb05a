import { Catalog } from '@orch/api';
import { EventRecorder, RestClient, SharedInformerFactory } from '@orch/client';
import { createLogger } from '@orch/server-common';
import { ApiPeer } from '@orch/testing';
export { waitFor } from '@orch/testing';
import type { Controller, ControllerContext } from '../../../controller';

/**
 * Test-only: a ControllerContext wired to an in-memory {@link ApiPeer} (the client's wire
 * format test server), for sync() tests of controllers. `stop()` ends everything.
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
  const peer = await ApiPeer.start();
  const client = new RestClient({ server: peer.url }, { component: 'test', timeoutMs: 5000 });
  const logger = createLogger('test', { level: 'error', write: () => undefined });
  const informers = new SharedInformerFactory(client, { informer: { logger, freeze: 'deep' } });
  const recorders: EventRecorder[] = [];
  const ctx: ControllerContext = {
    client,
    informers,
    catalog: new Catalog(),
    recorder: (reportingController) => {
      const r = new EventRecorder({ client, reportingController, reportingInstance: 'test', logger });
      recorders.push(r);
      return r;
    },
    logger,
    options: { workers: 1, rootCaPem: '', nodeMonitorGracePeriodMs: 40_000, terminatedPodGcThreshold: 12500, k8sCompatibility: true },
  };
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
      informers.start();
      await informers.waitForCacheSync();
    },
    async stop() {
      // run() with an aborted signal shuts the controller's queue down and stops its recorder.
      await Promise.all(controllers.map((c) => c.run(AbortSignal.abort())));
      await informers.shutdown();
      await Promise.all(recorders.map((r) => r.stop(100)));
      client.close();
      await peer.stop();
    },
  };
}
