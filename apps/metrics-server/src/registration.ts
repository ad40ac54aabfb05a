import type { apiregistrationV1, coreV1 } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { ApiError, type RestClient } from '@orch/client';
import type { Logger } from '@orch/server-common';
import { METRICS_VERSION } from './api';
import { NAME, NAMESPACE } from './options';

/** Creates or updates one object (PUT with the current resourceVersion when it exists). */
async function ensure<T extends KubeObject>(client: RestClient, collection: string, obj: T): Promise<void> {
  const path = `${collection}/${obj.metadata.name}`;
  try {
    const current = await client.request<T>({ method: 'GET', path });
    await client.request({ method: 'PUT', path, body: { ...current, ...obj, metadata: { ...current.metadata, ...obj.metadata } } });
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 404)) throw err;
    await client.request({ method: 'POST', path: collection, body: obj });
  }
}

/** The Service, Endpoints and APIService that make the gateway proxy the metrics API to `address:port`. */
export async function registerMetricsApi(client: RestClient, address: string, port: number, caPem: string, logger: Logger): Promise<void> {
  const labels = { 'app.orch.io/name': NAME };
  const metadata = { name: NAME, namespace: NAMESPACE, labels };
  await ensure<coreV1.Service & KubeObject>(client, `/api/v1/namespaces/${NAMESPACE}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: { ports: [{ name: 'https', port: 443, targetPort: port, protocol: 'TCP' }] },
  });
  await ensure<coreV1.Endpoints & KubeObject>(client, `/api/v1/namespaces/${NAMESPACE}/endpoints`, {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata,
    subsets: [{ addresses: [{ ip: address }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
  });
  await ensure<apiregistrationV1.APIService & KubeObject>(client, '/apis/apiregistration.orch.io/v1/apiservices', {
    apiVersion: 'apiregistration.orch.io/v1',
    kind: 'APIService',
    metadata: { name: `${METRICS_VERSION}.metrics.orch.io`, labels },
    spec: { service: { namespace: NAMESPACE, name: NAME, port: 443 }, group: 'metrics.orch.io', version: METRICS_VERSION, caBundle: Buffer.from(caPem).toString('base64'), groupPriorityMinimum: 100, versionPriority: 100 },
  });
  logger.info('registered the metrics API', { apiService: `${METRICS_VERSION}.metrics.orch.io`, endpoint: `${address}:${port}` });
}
