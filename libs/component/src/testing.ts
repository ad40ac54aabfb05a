import { FeatureGates } from '@orch/api';
import { RestClient, type ClientConfig } from '@orch/client';
import { HealthChecks, createLogger, createMetricsRegistry, parseFlags, type FlagDefs } from '@orch/server-common';
import { COMPONENT_FLAGS, type ComponentContext } from './component';

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
