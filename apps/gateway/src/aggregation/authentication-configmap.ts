import { StatusError, type KubeObject } from '@orch/apimachinery';
import { FRONT_PROXY_CLIENT_NAME, type FrontProxyPki } from '@orch/auth';
import type { GenericStore } from '../registry/generic-store';
import type { RequestContext } from '../registry/strategy';

/** Where extension API servers read how to authenticate the gateway's proxied requests (upstream kube-system/extension-apiserver-authentication). */
export const AUTHENTICATION_CONFIGMAP = { namespace: 'orch-system', name: 'extension-apiserver-authentication' };

/**
 * Publishes (creates or brings up to date) the `extension-apiserver-authentication` config
 * map: the client CA for direct client certificates, and the front-proxy CA, allowed names and
 * header names for the identity the gateway forwards. Idempotent; every replica may run it.
 */
export async function publishAuthenticationConfigMap(store: GenericStore, clientCaPem: string, frontProxy: FrontProxyPki, ctx: RequestContext): Promise<void> {
  const data = {
    'client-ca-file': clientCaPem,
    'requestheader-client-ca-file': frontProxy.ca.certPem,
    'requestheader-allowed-names': JSON.stringify([FRONT_PROXY_CLIENT_NAME]),
    'requestheader-username-headers': JSON.stringify(['X-Remote-User']),
    'requestheader-group-headers': JSON.stringify(['X-Remote-Group']),
    'requestheader-extra-headers-prefix': JSON.stringify(['X-Remote-Extra-']),
  };
  const { namespace, name } = AUTHENTICATION_CONFIGMAP;
  try {
    const current = (await store.get(namespace, name)) as KubeObject & { data?: Record<string, string> };
    if (JSON.stringify(current.data) === JSON.stringify(data)) return;
    await store.update(namespace, name, { ...current, data } as KubeObject, ctx);
  } catch (err) {
    if (!(err instanceof StatusError && err.code === 404)) throw err;
    await store.create(namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data } as KubeObject, ctx).catch((e: unknown) => {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    });
  }
}
