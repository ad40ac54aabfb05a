import { readFile } from 'node:fs/promises';
import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { selfSignedServingCert } from '@orch/auth';
import { COMPONENT_CONTEXT } from '@orch/component';
import { AgentInformers } from '../informers';
import { NodeMachine } from '../node/machine';
import { NodeAgentOptions, type NodeAgentContext } from '../options';
import { ProcessRuntime } from '../runtime/process/process-runtime';
import type { Runtime } from '../runtime/runtime';
import { RUNTIME } from '../runtime/runtime.module';
import { NodeAuth } from './auth';
import { startAgentServer, type AgentServerOptions, type AgentView } from './server';
import { StatsCollector } from './stats';
import { StreamingEndpoints } from './streams';

/** Injection tokens of the API's TLS material and of what it serves from. */
const SERVING_TLS = Symbol('ServingTls');
const AGENT_VIEW = Symbol('AgentView');

/**
 * The agent's HTTPS API (server.ts) on --address:--port, listening: an async provider, so its
 * port is known to whatever injects it (the nodes register with it). Closed at application
 * shutdown, after the containers stopped.
 */
export class AgentServer implements OnApplicationShutdown {
  private constructor(private readonly server: { port: number; close(): Promise<void> }) {}

  static async listen(opts: AgentServerOptions): Promise<AgentServer> {
    return new AgentServer(await startAgentServer(opts));
  }

  get port(): number {
    return this.server.port;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server.close();
  }
}

/**
 * --tls-cert-file and --tls-private-key-file (else a certificate made for the agent's names,
 * self-signed) and the CA bundle of --client-ca-file that client certificates are checked against.
 */
async function servingTls({ flags: f, nodeIp, hostname }: NodeAgentOptions): Promise<AgentServerOptions['tls']> {
  const ca = f['client-ca-file'] ? await readFile(f['client-ca-file'], 'utf8') : undefined;
  if (f['tls-cert-file']) return { cert: await readFile(f['tls-cert-file'], 'utf8'), key: await readFile(f['tls-private-key-file'], 'utf8'), ca };
  const made = await selfSignedServingCert([...new Set([nodeIp, '127.0.0.1', 'localhost', hostname])], `${hostname}@${Math.floor(Date.now() / 1000)}`);
  return { cert: made.certPem, key: made.keyPem, ca };
}

/** Authentication (client certificates, TokenReview) and authorization (AlwaysAllow or SubjectAccessReview) of the API. */
function nodeAuth({ flags: f }: NodeAgentOptions, ctx: NodeAgentContext, tls: AgentServerOptions['tls']): NodeAuth {
  return new NodeAuth({
    clientCaPem: tls.ca,
    anonymous: f['anonymous-auth'],
    tokenWebhook: f['authentication-token-webhook'] ? { client: ctx.client, ttlMs: f['authentication-token-webhook-cache-ttl'] } : undefined,
    authorization:
      f['authorization-mode'] === 'Webhook'
        ? { mode: 'Webhook', client: ctx.client, allowTtlMs: f['authorization-webhook-cache-authorized-ttl'], denyTtlMs: f['authorization-webhook-cache-unauthorized-ttl'] }
        : { mode: 'AlwaysAllow' },
  });
}

/** What the API serves: the pods of the informer, the runtime's view of them, the machine, health and metrics. */
function agentView(o: NodeAgentOptions, ctx: NodeAgentContext, runtime: Runtime, informers: AgentInformers, machine: NodeMachine): AgentView {
  const pods = informers.pods;
  return {
    nodeName: o.nodeNames[0],
    pods: () => pods.list(),
    pod: (ns, name) => pods.get(`${ns}/${name}`),
    runtime,
    processRuntime: runtime instanceof ProcessRuntime ? runtime : undefined,
    machine: machine.info,
    usage: machine.usage,
    metrics: ctx.metrics,
    health: ctx.health,
    stats: new StatsCollector(o.nodeNames[0], machine.startedAt),
    nodeLogsDir: o.flags['node-logs-dir'],
  };
}

/** exec, attach and port-forward: `--stream-creation-timeout` and `--streaming-connection-idle-timeout`. */
function streamingEndpoints({ flags: f }: NodeAgentOptions, ctx: NodeAgentContext, view: AgentView): StreamingEndpoints {
  return new StreamingEndpoints({ runtime: view.runtime, pod: view.pod, streamCreationTimeoutMs: f['stream-creation-timeout'], idleTimeoutMs: f['streaming-connection-idle-timeout'], metrics: ctx.metrics });
}

/** The HTTPS API: its TLS material, authentication and authorization, the streaming endpoints and the server. */
@Module({
  providers: [
    { provide: SERVING_TLS, useFactory: servingTls, inject: [NodeAgentOptions] },
    { provide: NodeAuth, useFactory: nodeAuth, inject: [NodeAgentOptions, COMPONENT_CONTEXT, SERVING_TLS] },
    { provide: AGENT_VIEW, useFactory: agentView, inject: [NodeAgentOptions, COMPONENT_CONTEXT, RUNTIME, AgentInformers, NodeMachine] },
    { provide: StreamingEndpoints, useFactory: streamingEndpoints, inject: [NodeAgentOptions, COMPONENT_CONTEXT, AGENT_VIEW] },
    {
      provide: AgentServer,
      useFactory: (o: NodeAgentOptions, ctx: NodeAgentContext, tls: AgentServerOptions['tls'], auth: NodeAuth, view: AgentView, streaming: StreamingEndpoints) =>
        AgentServer.listen({ host: o.flags.address, port: o.flags.port, tls, auth, logger: ctx.logger, view, streaming }),
      inject: [NodeAgentOptions, COMPONENT_CONTEXT, SERVING_TLS, NodeAuth, AGENT_VIEW, StreamingEndpoints],
    },
  ],
  exports: [AgentServer],
})
export class ServerModule {}
