import type { FlagDefs, FlagValues } from '@orch/server-common';

/** Every gateway flag, declared once (SPEC flag names; `--help` is generated from this table). */
export const GATEWAY_FLAGS = {
  'secure-port': { type: 'int', default: 6443, description: 'The port on which to serve HTTPS with authentication and authorization.' },
  'bind-address': { type: 'string', default: '0.0.0.0', description: 'The IP address on which to listen for the --secure-port port.' },
  'data-dir': { type: 'string', default: '', description: 'Directory for state (SQLite database, PKI, kubeconfigs). Default $ORCH_DATA_DIR or ./.orch.' },
  'pki-dir': { type: 'string', default: '', description: 'Directory of the cluster PKI (CA, serving and admin certificates); default <data-dir>/pki. Gateway replicas share one.' },
  'storage-backend': { type: 'string', default: 'sqlite', description: 'The storage backend: sqlite (embedded) or etcd.' },
  'etcd-servers': { type: 'stringSlice', default: [], description: 'List of etcd servers to connect with (scheme://ip:port), comma separated.' },
  'etcd-prefix': { type: 'string', default: '/registry', description: 'The prefix to prepend to all resource paths in etcd.' },
  'runtime-config': { type: 'string', default: '', description: 'A set of key=value pairs that enable or disable built-in APIs (e.g. batch/v1=false, api/all=false).' },
  'feature-gates': { type: 'string', default: '', description: 'A set of key=value pairs that describe feature gates for alpha/experimental features.' },
  'nats-url': { type: 'string', default: '', description: 'NATS server(s) (nats://host:port, comma separated) carrying watch events between gateway replicas; default $ORCH_NATS_URL, else an in-process bus (one gateway).' },
  'redis-url': { type: 'string', default: '', description: 'Redis (redis://host:port) holding the watch event history shared by gateway replicas; default $ORCH_REDIS_URL, else each gateway keeps its own in memory.' },
  'watch-history-retention': { type: 'duration', default: 5 * 60_000, description: 'How long watch history is kept; older resourceVersions get 410 Gone.' },
  'continue-token-lifetime': { type: 'duration', default: 5 * 60_000, description: 'How long a list continue token stays valid; older tokens get 410 Gone.' },
  'min-request-timeout': { type: 'int', default: 1800, description: 'Minimum number of seconds a watch stays open before the server ends it (randomized up to twice this).' },
  'livez-grace-period': { type: 'duration', default: 0, description: 'Maximum startup duration during which livez does not fail for slow start-up checks.' },
  'shutdown-delay-duration': { type: 'duration', default: 0, description: 'Time to delay the termination: readyz fails first, in-flight requests finish.' },
  'tls-cert-file': { type: 'string', default: '', description: 'File containing the default x509 serving certificate (default: generated PKI).' },
  'tls-private-key-file': { type: 'string', default: '', description: 'File containing the default x509 private key matching --tls-cert-file.' },
  'client-ca-file': { type: 'string', default: '', description: 'Enables client certificate authentication with this CA bundle (default: the generated CA).' },
  'tls-san': { type: 'stringSlice', default: [], description: 'Extra host names and IPs for the generated serving certificate.' },
  'advertise-url': { type: 'string', default: '', description: 'URL written into generated kubeconfigs (default https://<bind-address>:<secure-port>, 127.0.0.1 for 0.0.0.0).' },
  'enable-bootstrap-token-auth': { type: 'bool', default: false, description: 'Allows bearer tokens of type bootstrap.orch.io/token secrets in orch-system to authenticate (TLS bootstrap of joining nodes).' },
  'write-component-kubeconfigs': { type: 'bool', default: false, description: 'Write a kubeconfig with its own client certificate for each control-plane component into the data dir (local profile).' },
  'node-name': { type: 'string', default: '', description: 'Node name in the node-agent kubeconfig written by --write-component-kubeconfigs (default: this host name).' },
  'anonymous-auth': { type: 'bool', default: true, description: 'Enables anonymous requests (user system:anonymous); they are then authorized like any other.' },
  'k8s-group-aliases': { type: 'bool', default: true, description: 'Serve *.k8s.io group paths as undeclared aliases of the *.orch.io groups (for stock kubectl).' },
  'service-cluster-ip-range': { type: 'string', default: '10.96.0.0/12', description: 'A CIDR notation IPv4 range from which to assign service cluster IPs (mask between /12 and /30).' },
  'service-node-port-range': { type: 'string', default: '30000-32767', description: 'A port range to reserve for services with NodePort visibility, inclusive at both ends (e.g. 30000-32767).' },
  'bookmark-interval': { type: 'duration', default: 60_000, description: 'Interval of BOOKMARK events on watches that allow them.' },
  'v': { type: 'int', default: 0, description: 'Log verbosity.', short: 'v' },
} satisfies FlagDefs;

export type GatewayOptions = FlagValues<typeof GATEWAY_FLAGS>;
