import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { CONTROLLER_NAMESPACE } from '@orch/auth';
import type { KubeObject } from '@orch/apimachinery';
import { ApiError, Backoff, EventRecorder, RestClient, sleep, type ClientConfig, type TokenSource } from '@orch/client';
import { COMPONENT_CONTEXT, ComponentTasks } from '@orch/component';
import type { Logger } from '@orch/server-common';
import type { TokenRequest } from './framework/api';
import type { ControllerContext, ControllerDescriptor } from './framework/controller';
import { ControllerContexts } from './framework/controller-providers';
import { SERVICEACCOUNTS } from './framework/resources';
import { SHARED_CONTROLLER_CONTEXT } from './tokens';
import { CONTROLLER_MANAGER_OPTIONS, type ControllerManagerComponent, type ControllerManagerOptions } from './options';

/** Lifetime asked for each controller token (upstream's controller client builder: 1 h). */
export const CONTROLLER_TOKEN_SECONDS = 3600;
/** A token is renewed once this share of its lifetime has passed (as the node-agent does for pods). */
const RENEW_AT = 0.8;
/** A 401 triggers a renewal at most this often (a rejected token must not turn into a request storm). */
const MIN_REJECTED_RENEWAL_MS = 5_000;

/**
 * The token of one controller's service account `orch-system/<account>` (upstream
 * `--use-service-account-credentials` with the dynamic, TokenRequest-based client builder).
 * The controller-manager's own client makes sure the account exists and requests a token for
 * it; the token is renewed at 80 % of its lifetime, and at once (at most every 5 s) when the
 * gateway answers 401 — the account was deleted and is re-created, or the signing key changed.
 * Failures are retried with backoff while the last token is kept.
 */
export class ServiceAccountTokenSource implements TokenSource {
  private current?: { token: string; renewAt: number };
  private wake?: () => void;
  private lastRejectedRenewal = 0;

  constructor(
    private readonly root: RestClient,
    readonly namespace: string,
    readonly account: string,
    private readonly logger: Logger,
  ) {}

  token(): string {
    return this.current?.token ?? '';
  }

  rejected(): void {
    const now = Date.now();
    if (now - this.lastRejectedRenewal < MIN_REJECTED_RENEWAL_MS) return;
    this.lastRejectedRenewal = now;
    if (this.current) this.current.renewAt = now;
    this.wake?.();
  }

  /** Gets the first token (retrying until `signal` aborts), then keeps it renewed in the background until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
    while (!this.current) {
      if (signal.aborted) throw new Error(`stopped before a token for ${this.namespace}/${this.account} was obtained`);
      try {
        await this.renew();
      } catch (err) {
        this.logger.warn('requesting a controller token failed; retrying', { serviceAccount: this.account, err: describe(err) });
        await sleep(backoff.next(), signal);
      }
    }
    void this.keepRenewed(signal, backoff);
  }

  private async keepRenewed(signal: AbortSignal, backoff: Backoff): Promise<void> {
    while (!signal.aborted) {
      const wait = Math.max(0, (this.current?.renewAt ?? 0) - Date.now());
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, wait);
        signal.addEventListener('abort', done, { once: true });
        this.wake = done;
      });
      if (signal.aborted) return;
      try {
        await this.renew();
        backoff.reset();
      } catch (err) {
        this.logger.warn('renewing a controller token failed; retrying', { serviceAccount: this.account, err: describe(err) });
        if (this.current) this.current.renewAt = Date.now() + backoff.next();
      }
    }
  }

  private async renew(): Promise<void> {
    const accounts = this.root.resource<KubeObject>(SERVICEACCOUNTS, this.namespace);
    try {
      await accounts.get(this.account);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
      await accounts.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: this.account, namespace: this.namespace } }).catch((e: unknown) => {
        if (!(e instanceof ApiError && e.code === 409)) throw e;
      });
    }
    const requested = Date.now();
    const answer = await accounts.createSubresource<TokenRequest>(this.account, 'token', {
      apiVersion: 'authentication.orch.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: CONTROLLER_TOKEN_SECONDS },
    });
    const token = answer.status?.token;
    if (!token) throw new Error(`the TokenRequest for ${this.namespace}/${this.account} returned no token`);
    const expires = Date.parse(answer.status?.expirationTimestamp ?? '') || requested + CONTROLLER_TOKEN_SECONDS * 1000;
    this.current = { token, renewAt: requested + (expires - requested) * RENEW_AT };
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The client a controller uses with `--use-service-account-credentials`: the gateway address
 * and CA of the controller-manager's own configuration, the account's token, and no client
 * certificate (a certificate would authenticate first and hide the token, as upstream's
 * anonymous base config avoids).
 */
export function serviceAccountClient(root: ClientConfig, source: ServiceAccountTokenSource): RestClient {
  const config: ClientConfig = {
    server: root.server,
    caPem: root.caPem,
    tlsServerName: root.tlsServerName,
    insecureSkipTlsVerify: root.insecureSkipTlsVerify,
    tokenSource: source,
  };
  return new RestClient(config, { component: 'controller-manager' });
}

/** Event recorders reporting as `reportingController`, writing through `client`, from this process. */
export function eventRecorders(client: RestClient, reportingInstance: string): ControllerContext['recorder'] {
  return (reportingController) => new EventRecorder({ client, reportingController, reportingInstance });
}

/**
 * Controller identities (`--use-service-account-credentials`): the context each controller is
 * built with. A controller whose descriptor names a service account gets a client, and event
 * recorders, that authenticate as `orch-system/<account>` with a TokenRequest token (the first
 * token is obtained before the controller is built, then kept renewed until the component
 * stops); every other controller, and every controller without the flag, shares the
 * controller-manager's own. Informers stay shared and read as the controller-manager. The
 * accounts' clients close when the application shuts down.
 */
@Injectable()
export class ControllerIdentities extends ControllerContexts implements OnApplicationShutdown {
  private readonly clients = new Map<string, { client: RestClient; started: Promise<void> }>();

  constructor(
    @Inject(SHARED_CONTROLLER_CONTEXT) private readonly shared: ControllerContext,
    @Inject(COMPONENT_CONTEXT) private readonly component: ControllerManagerComponent,
    @Inject(CONTROLLER_MANAGER_OPTIONS) private readonly options: ControllerManagerOptions,
    @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
  ) {
    super();
  }

  async contextFor(d: ControllerDescriptor): Promise<ControllerContext> {
    if (!this.options.useServiceAccountCredentials || !d.serviceAccount) return this.shared;
    const client = await this.clientOf(d.serviceAccount);
    return { ...this.shared, client, recorder: eventRecorders(client, this.component.identity) };
  }

  private async clientOf(account: string): Promise<RestClient> {
    let own = this.clients.get(account);
    if (!own) {
      const c = this.component;
      const source = new ServiceAccountTokenSource(c.client, CONTROLLER_NAMESPACE, account, c.logger);
      own = { client: serviceAccountClient(c.clientConfig, source), started: source.start(this.tasks.signal) };
      this.clients.set(account, own);
    }
    await own.started;
    return own.client;
  }

  onApplicationShutdown(): void {
    for (const own of this.clients.values()) own.client.close();
  }
}
