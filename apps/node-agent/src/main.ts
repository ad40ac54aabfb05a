import { join, resolve } from 'node:path';
import { loadKubeconfig, writeKubeconfig } from '@orch/auth';
import { COMPONENT_FLAGS, componentMain } from '@orch/component';
import { createLogger, parseFlagsOrExit } from '@orch/server-common';
import { hasValidNodeCredentials, tlsBootstrap } from './join/bootstrap';
import { discoverCluster, parseBootstrapToken } from './join/discovery';
import { machineHostname } from './node/machine';
import { NodeAgentModule } from './node-agent.module';
import { NODE_AGENT_FLAGS, NodeAgentOptions, type NodeAgentFlags } from './options';

const DESCRIPTION = `The orch node agent runs on every machine: it registers the machine as a Node, keeps its Lease and status, and runs the pods bound to it (as host processes, or simulated), serving their logs, stats and a proxy on its HTTPS port.

Commands:
  run (default)   run the agent with --kubeconfig (or TLS-bootstrap it from --bootstrap-kubeconfig)
  join            join a cluster: node-agent join --server https://HOST:6443 --token <id>.<secret> [flags]
                  (verifies the signed cluster-info, requests a client certificate through a
                  CertificateSigningRequest, then runs as system:node:<name>)`;

/**
 * Does what must happen before the component can start: for `join`, cluster discovery and
 * TLS bootstrap; for `run` with --bootstrap-kubeconfig, TLS bootstrap when the kubeconfig is
 * missing or expiring. Returns the flags to add for the run (the kubeconfig written, the CA).
 */
async function prepare(command: 'run' | 'join', f: NodeAgentFlags): Promise<string[]> {
  const logger = createLogger('node-agent');
  const rootDir = resolve(f['root-dir']);
  const certDir = f['cert-dir'] || join(rootDir, 'pki');
  const nodeName = f['hostname-override'] || machineHostname();
  const kubeconfig = f.kubeconfig || join(rootDir, 'node-agent.kubeconfig');
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (command === 'join') {
      const extra = [`--kubeconfig=${kubeconfig}`, ...(f['client-ca-file'] ? [] : [`--client-ca-file=${join(certDir, 'ca.crt')}`])];
      if (await hasValidNodeCredentials(kubeconfig, nodeName)) {
        logger.info('already joined: using the node credentials on disk', { kubeconfig });
        return extra;
      }
      if (!f.server || !f.token) throw new Error('join needs --server https://HOST:6443 and --token <id>.<secret>');
      const token = parseBootstrapToken(f.token);
      const info = await discoverCluster({ server: f.server, token, pins: f['discovery-token-ca-cert-hash'], timeoutMs: f['bootstrap-timeout'], signal: stop.signal, logger });
      const bootstrapPath = join(rootDir, 'bootstrap.kubeconfig');
      await writeKubeconfig(bootstrapPath, { server: f.server, caPem: info.caPem, token: f.token, user: 'tls-bootstrap-token-user', context: 'tls-bootstrap-token-user@orch' });
      await tlsBootstrap({ bootstrap: { server: f.server, caPem: info.caPem, token: f.token }, nodeName, certDir, kubeconfigPath: kubeconfig, timeoutMs: f['bootstrap-timeout'], signal: stop.signal, logger });
      return extra;
    }
    if (f['bootstrap-kubeconfig'] && !(await hasValidNodeCredentials(kubeconfig, nodeName))) {
      const b = await loadKubeconfig(f['bootstrap-kubeconfig']);
      await tlsBootstrap({ bootstrap: b, nodeName, certDir, kubeconfigPath: kubeconfig, timeoutMs: f['bootstrap-timeout'], signal: stop.signal, logger });
      return [`--kubeconfig=${kubeconfig}`];
    }
    return [];
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The arguments of the run: the flags given (after the command), plus those {@link prepare} adds. */
async function runArguments(argv: string[]): Promise<string[]> {
  const command = argv[0] === 'join' || argv[0] === 'run' ? argv[0] : 'run';
  const args = argv[0] === command ? argv.slice(1) : argv;
  const { values } = parseFlagsOrExit({ name: `node-agent ${command}`, description: DESCRIPTION }, { ...COMPONENT_FLAGS, ...NODE_AGENT_FLAGS }, args);
  return [...args, ...(await prepare(command, values as NodeAgentFlags))];
}

componentMain(
  {
    name: 'node-agent',
    description: DESCRIPTION,
    defaultPort: 10248,
    flags: NODE_AGENT_FLAGS,
    leaderElection: false,
    // The HTTPS API, node registration and heartbeat, and the pod workers driving the runtime, until
    // the signal aborts; then containers are stopped within --shutdown-grace-period.
    module: (ctx) => NodeAgentModule.forRoot(new NodeAgentOptions(ctx.flags)),
  },
  runArguments(process.argv.slice(2)),
);
