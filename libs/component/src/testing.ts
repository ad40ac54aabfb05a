import type { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { FeatureGates } from '@orch/api';
import { RestClient, type ClientConfig } from '@orch/client';
import { HealthChecks, createLogger, createMetricsRegistry, parseFlags, type FlagDefs } from '@orch/server-common';
import { COMPONENT_FLAGS, type ComponentContext } from './component';
import { ComponentTasks, createComponentApplication } from './nest';

/**
 * For tests of a component's application: the context `runComponent` would hand its `run`,
 * with `args` parsed against the component's flags and a client of `clientConfig` (an API
 * peer or a gateway), logging only errors, dropped. Close `client` when done.
 */
export function testComponentContext<D extends FlagDefs>(name: string, flags: D, args: string[], clientConfig: ClientConfig): ComponentContext<D> {
  const { values } = parseFlags({ ...COMPONENT_FLAGS, ...flags }, args);
  return {
    name,
    flags: values as unknown as ComponentContext<D>['flags'],
    client: new RestClient(clientConfig, { component: 'test', timeoutMs: 5000 }),
    clientConfig,
    logger: createLogger('test', { level: 'error', write: () => undefined }),
    health: new HealthChecks({}),
    metrics: createMetricsRegistry(),
    identity: 'test',
    features: new FeatureGates(''),
  };
}

/** A component application a test started, as `runComponentModule` runs it. */
export interface TestComponent {
  app: INestApplicationContext;
  /** Aborts the run signal, waits for the loops (rejects with the first loop failure), closes the application and `ctx.client`. */
  stop(): Promise<void>;
}

/**
 * Starts `module` for `ctx` as `runComponentModule` does (Nest logging off); rejects with the
 * start-up error, the client closed. Stop it with {@link TestComponent.stop}.
 */
export async function startTestComponent<D extends FlagDefs>(ctx: ComponentContext<D>, module: DynamicModule | Type): Promise<TestComponent> {
  const run = new AbortController();
  let app: INestApplicationContext;
  try {
    app = await createComponentApplication(ctx, run.signal, module, false);
  } catch (err) {
    ctx.client.close();
    throw err;
  }
  return {
    app,
    async stop() {
      run.abort();
      try {
        await app.get(ComponentTasks).settled();
      } finally {
        await app.close();
        ctx.client.close();
      }
    },
  };
}
