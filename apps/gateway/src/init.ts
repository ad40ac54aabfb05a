import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { ensurePki, writeKubeconfig } from '@orch/auth';
import { parseFlagsOrExit, type FlagDefs } from '@orch/server-common';
import { FeatureGates } from '@orch/api';
import { apiServiceServingHosts, apiServiceSpecs } from './api-endpoints/api-endpoints';
import { writeComponentKubeconfigs } from './gateway';
import { GATEWAY_FLAGS } from './options';
import { serviceRangesFromFlags } from './registry/service-ip';

/** `gateway init` flags: what a cluster of replicas shares, created once before any replica starts. */
const INIT_FLAGS = {
  'data-dir': { type: 'string', default: '', description: 'Directory for the kubeconfigs (default $ORCH_DATA_DIR or ./.orch).' },
  'pki-dir': { type: 'string', default: '', description: 'Directory of the cluster PKI (default <data-dir>/pki); the gateway replicas are started with the same --pki-dir.' },
  'tls-san': { type: 'stringSlice', default: [], description: 'Extra host names and IPs for the serving certificate (every name clients use for any replica or the load balancer).' },
  'service-cluster-ip-range': { ...GATEWAY_FLAGS['service-cluster-ip-range'], description: 'The replicas\' --service-cluster-ip-range: the API Services\' addresses and names go into the serving certificate too, so no replica has to reissue it (dropping the --tls-san names).' },
  server: { type: 'string', default: 'https://127.0.0.1:6443', description: 'API URL written into the kubeconfigs (the load balancer, or one replica).' },
  'node-name': { type: 'string', default: '', description: 'Node name of the node-agent identity (default: this host name).' },
} satisfies FlagDefs;

/**
 * orch gateway init: creates the cluster PKI (CA, serving, admin and service-account keys)
 * and the kubeconfigs of the admin and of every component, then exits. The HA profile
 * (start:ha, docker compose) runs it once; every gateway replica then reuses the PKI.
 */
async function main(): Promise<void> {
  const { values: o } = parseFlagsOrExit({ name: 'gateway-init', description: 'Creates the shared PKI and the component kubeconfigs of a gateway cluster, then exits.' }, INIT_FLAGS);
  const dir = resolve(o['data-dir'] || process.env.ORCH_DATA_DIR || '.orch');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Every name a replica requires (its in-cluster API Services, both spellings), else the first
  // replica to start would issue a serving certificate of its own without the load balancer's names.
  const cidr = serviceRangesFromFlags({ 'service-cluster-ip-range': o['service-cluster-ip-range'], 'service-node-port-range': GATEWAY_FLAGS['service-node-port-range'].default }, new FeatureGates('')).cidr;
  const pki = await ensurePki(o['pki-dir'] || join(dir, 'pki'), { hosts: [...o['tls-san'], ...apiServiceServingHosts(apiServiceSpecs(cidr, true))] });
  await writeKubeconfig(join(dir, 'admin.kubeconfig'), { server: o.server, caPem: pki.ca.certPem, clientCertPem: pki.admin.certPem, clientKeyPem: pki.admin.keyPem, user: 'admin', context: 'admin@orch' });
  await writeComponentKubeconfigs(dir, pki, o.server, o['node-name'] || hostname());
  console.log(`gateway init: PKI in ${o['pki-dir'] || join(dir, 'pki')}, kubeconfigs in ${dir}`);
}

main().catch((err) => {
  console.error(`gateway init: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
