import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { startTestComponent, testComponentContext } from '@orch/component';
import { ApiPeer, eventually } from '@orch/testing';
import { ControllerManagerModule } from './controller-manager.module';
import { CONTROLLERS } from './controllers';
import { controllerToken } from './framework/controller-providers';
import { storedObject } from './framework/testing/harness';
import { CONTROLLER_MANAGER_FLAGS, controllerManagerOptions, type ControllerManagerComponent } from './options';

/** The controller-manager's application on an API peer, started with `args` as main.ts starts it. */
async function start(peer: ApiPeer, args: string[]) {
  const component: ControllerManagerComponent = testComponentContext('controller-manager', CONTROLLER_MANAGER_FLAGS, args, { server: peer.url });
  return startTestComponent(component, ControllerManagerModule.forRoot(controllerManagerOptions(component)));
}

const built = (app: INestApplicationContext) =>
  CONTROLLERS.map((d) => d.name).filter((name) => {
    try {
      return !!app.get(controllerToken(name), { strict: false });
    } catch {
      return false;
    }
  });

describe('ControllerManagerModule', () => {
  let peer: ApiPeer;
  beforeEach(async () => {
    peer = await ApiPeer.start();
  });
  afterEach(() => peer.stop());

  it.each([
    { controllers: 'serviceaccount', want: ['serviceaccount'] },
    { controllers: 'serviceaccount,tokencleaner', want: ['serviceaccount', 'tokencleaner'] },
    { controllers: '*', want: CONTROLLERS.filter((d) => !d.disabledByDefault).map((d) => d.name) },
    { controllers: '*,-garbagecollector,-namespace', want: CONTROLLERS.filter((d) => !d.disabledByDefault && d.name !== 'garbagecollector' && d.name !== 'namespace').map((d) => d.name) },
  ])('--controllers=$controllers provides exactly those controllers', async ({ controllers, want }) => {
    const cm = await start(peer, [`--controllers=${controllers}`, '--use-service-account-credentials=false']);
    try {
      expect(built(cm.app).sort()).toEqual([...want].sort());
    } finally {
      await cm.stop();
    }
  });

  it('fails to start on an unknown controller name', async () => {
    await expect(start(peer, ['--controllers=*,nosuch'])).rejects.toThrow('"nosuch" is not in the list of known controllers');
  });

  it('runs the controllers until the run signal aborts, then finishes', async () => {
    const cm = await start(peer, ['--controllers=serviceaccount', '--use-service-account-credentials=false']);
    peer.put('/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, status: { phase: 'Active' } });
    await eventually('default service account created', () => storedObject(peer, '/v1/serviceaccounts', 'default', 'a'));
    await cm.stop();
  });

  it('with --use-service-account-credentials a controller writes as its own account and the informers read as the controller-manager', async () => {
    peer.intercept((req) =>
      req.method === 'POST' && req.path === '/api/v1/namespaces/orch-system/serviceaccounts/service-account-controller/token'
        ? { status: 201, body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', status: { token: 'sa-token', expirationTimestamp: new Date(Date.now() + 3_600_000).toISOString() } } }
        : undefined,
    );
    const cm = await start(peer, ['--controllers=serviceaccount']);
    try {
      expect(storedObject(peer, '/v1/serviceaccounts', 'service-account-controller', 'orch-system')).toBeDefined();
      peer.put('/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, status: { phase: 'Active' } });
      await eventually('default service account created', () => storedObject(peer, '/v1/serviceaccounts', 'default', 'a'));
      expect(peer.requestsTo('POST', '/api/v1/namespaces/a/serviceaccounts').map((r) => r.headers.authorization)).toEqual(['Bearer sa-token']);
      expect(peer.lists('/api/v1/namespaces').map((r) => r.headers.authorization)).not.toContain('Bearer sa-token');
    } finally {
      await cm.stop();
    }
  });
});
