import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { selfSignedServingCert } from '@orch/auth';
import { COMPONENT_CONTEXT } from '@orch/component';
import { AgentInformers } from '../informers';
import { NodeMachine } from '../node/machine';
import { NodeAgentOptions, type NodeAgentContext } from '../options';
import { ProcessRuntime } from '../runtime/process/process-runtime';
import type { Runtime } from '../runtime/runtime';
import { RUNTIME } from '../runtime/runtime.module';
import { NodeAuth } from './auth';
import { startAgentServer } from './server';
import { StatsCollector } from './stats';
import { StreamingEndpoints } from './streams';

/** Injection token of the CA bundle of --client-ca-file (undefined without): client certificates of the API. */
const CLIENT_CA = Symbol('ClientCa');

/**
 * The agent's HTTPS API (server.ts) on --address:--port: listening once the module is
 * initialized (its port is known before the nodes register), closed at application shutdown,
 * after the containers stopped.
 */
@Injectable()
export class AgentServer implements OnModuleInit, OnApplicationShutdown {
  private server?: { port: number; close(): Promise<void> };

  constructor(
    @Inject(NodeAgentOptions) private readonly options: NodeAgentOptions,
    @Inject(COMPONENT_CONTEXT) private readonly ctx: NodeAgentContext,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(AgentInformers) private readonly informers: AgentInformers,
    @Inject(NodeMachine) private readonly machine: NodeMachine,
    @Inject(NodeAuth) private readonly auth: NodeAuth,
    @Inject(StreamingEndpoints) private readonly streaming: StreamingEndpoints,
    @Inject(CLIENT_CA) private readonly clientCa: string | undefined,
  ) {}

  /** The port the API listens on (once initialized). */
  get port(): number {
    if (!this.server) throw new Error('the agent server is not listening yet');
    return this.server.port;
  }

  async onModuleInit(): Promise<void> {
    const { flags: f, nodeIp, hostname, nodeNames } = this.options;
    const pods = this.informers.pods;
    this.server = await startAgentServer({
      host: f.address,
      port: f.port,
      tls: { ...(await servingCert(f['tls-cert-file'], f['tls-private-key-file'], [nodeIp, '127.0.0.1', 'localhost', hostname], hostname)), ca: this.clientCa },
      auth: this.auth,
      logger: this.ctx.logger,
      view: {
        nodeName: nodeNames[0],
        pods: () => pods.list(),
        pod: (ns, name) => pods.get(`${ns}/${name}`),
        runtime: this.runtime,
        processRuntime: this.runtime instanceof ProcessRuntime ? this.runtime : undefined,
        machine: this.machine.info,
        usage: this.machine.usage,
        metrics: this.ctx.metrics,
        health: this.ctx.health,
        stats: new StatsCollector(nodeNames[0], this.machine.startedAt),
        nodeLogsDir: f['node-logs-dir'],
      },
      streaming: this.streaming,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}

/** --tls-cert-file and --tls-private-key-file, else a self-signed certificate for the agent's names. */
async function servingCert(certFile: string, keyFile: string, names: string[], hostname: string): Promise<{ cert: string; key: string }> {
  if (certFile && keyFile) return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  const tls = await selfSignedServingCert([...new Set(names)], `${hostname}@${Math.floor(Date.now() / 1000)}`);
  return { cert: tls.certPem, key: tls.keyPem };
}

/** Authentication (client certificates, TokenReview) and authorization (AlwaysAllow or SubjectAccessReview) of the API. */
function nodeAuth(options: NodeAgentOptions, ctx: NodeAgentContext, clientCaPem: string | undefined): NodeAuth {
  const f = options.flags;
  return new NodeAuth({
    clientCaPem,
    anonymous: f['anonymous-auth'],
    tokenWebhook: f['authentication-token-webhook'] ? { client: ctx.client, ttlMs: f['authentication-token-webhook-cache-ttl'] } : undefined,
    authorization:
      f['authorization-mode'] === 'Webhook'
        ? { mode: 'Webhook', client: ctx.client, allowTtlMs: f['authorization-webhook-cache-authorized-ttl'], denyTtlMs: f['authorization-webhook-cache-unauthorized-ttl'] }
        : { mode: 'AlwaysAllow' },
  });
}

/** The HTTPS API: its authentication and authorization, the streaming endpoints (exec, attach, port-forward) and the server. */
@Module({
  providers: [
    { provide: CLIENT_CA, useFactory: async (options: NodeAgentOptions) => (options.flags['client-ca-file'] ? readFile(options.flags['client-ca-file'], 'utf8') : undefined), inject: [NodeAgentOptions] },
    { provide: NodeAuth, useFactory: nodeAuth, inject: [NodeAgentOptions, COMPONENT_CONTEXT, CLIENT_CA] },
    {
      provide: StreamingEndpoints,
      useFactory: (options: NodeAgentOptions, ctx: NodeAgentContext, runtime: Runtime, informers: AgentInformers) =>
        new StreamingEndpoints({
          runtime,
          pod: (ns, name) => informers.pods.get(`${ns}/${name}`),
          streamCreationTimeoutMs: options.flags['stream-creation-timeout'],
          idleTimeoutMs: options.flags['streaming-connection-idle-timeout'],
          metrics: ctx.metrics,
        }),
      inject: [NodeAgentOptions, COMPONENT_CONTEXT, RUNTIME, AgentInformers],
    },
    AgentServer,
  ],
  exports: [AgentServer],
})
export class ServerModule {}
