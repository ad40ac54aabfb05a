import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { coreV1 } from '@orch/api';
import { COMPONENT_CONTEXT } from '@orch/component';
import { RequestAuthenticator, authenticationConfigFrom } from './authentication';
import { NAMESPACE, type MetricsServerComponent } from './options';

const AUTHENTICATION_CONFIGMAP = `/api/v1/namespaces/${NAMESPACE}/configmaps/extension-apiserver-authentication`;
/** How often the config map is read again (the gateway rewrites it when its CAs change). */
const RELOAD_MS = 60_000;

/**
 * Who may call the metrics API: the gateway's `orch-system/extension-apiserver-authentication`
 * config map (client CA, front-proxy CA and headers), read before the server starts (a failure
 * fails start-up) and every minute after; a failed reload keeps the last one.
 */
@Injectable()
export class AuthenticationSource implements OnModuleInit, OnApplicationShutdown {
  private authenticator?: RequestAuthenticator;
  private timer?: NodeJS.Timeout;

  constructor(@Inject(COMPONENT_CONTEXT) private readonly component: MetricsServerComponent) {}

  /** The authenticator of the config map last read. */
  current(): RequestAuthenticator {
    if (!this.authenticator) throw new Error('the authentication config map has not been read yet');
    return this.authenticator;
  }

  async onModuleInit(): Promise<void> {
    this.authenticator = await this.load();
    this.timer = setInterval(() => {
      this.load().then(
        (a) => (this.authenticator = a),
        (err: unknown) => this.component.logger.warn('reloading the authentication config map failed', { error: (err as Error).message }),
      );
    }, RELOAD_MS);
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async load(): Promise<RequestAuthenticator> {
    const cm = await this.component.client.request<coreV1.ConfigMap>({ method: 'GET', path: AUTHENTICATION_CONFIGMAP });
    return new RequestAuthenticator(authenticationConfigFrom(cm.data ?? {}));
  }
}
