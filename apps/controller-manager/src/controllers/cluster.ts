import type { ControllerDescriptor } from '../framework/controller';
import { bootstrapSignerController } from './bootstrapsigner/signer';
import { clusterRoleAggregationController } from './clusterrole-aggregation/aggregation-controller';
import { csrApprovingController } from './csrapproving/approver';
import { csrSigningController } from './csrsigning/signer';
import { endpointsController } from './endpoints/endpoints-controller';
import { endpointSliceController } from './endpointslice/endpointslice-controller';
import { endpointSliceMirroringController } from './endpointslice-mirroring/mirroring-controller';
import { namespaceController } from './namespace/namespace-controller';
import { nodeLifecycleController } from './nodelifecycle/node-lifecycle-controller';
import { podGcController } from './podgc/podgc-controller';
import { resourceQuotaController } from './resourcequota/resourcequota-controller';
import { rootCaCertPublisher } from './root-ca-cert-publisher/publisher';
import { serviceAccountController } from './serviceaccount/serviceaccounts-controller';
import { serviceAccountTokenController } from './serviceaccount-token/tokens-controller';
import { tokenCleanerController } from './tokencleaner/tokencleaner';

/** Cluster controllers (namespace, service accounts, tokens, root CA, bootstrap, endpoints, nodes, pod GC, resource quota, CSR, ClusterRole aggregation), by upstream `--controllers` name. */
export const CLUSTER_CONTROLLERS: ControllerDescriptor[] = [
  namespaceController,
  serviceAccountController,
  serviceAccountTokenController,
  rootCaCertPublisher,
  bootstrapSignerController,
  tokenCleanerController,
  endpointsController,
  endpointSliceController,
  endpointSliceMirroringController,
  nodeLifecycleController,
  podGcController,
  resourceQuotaController,
  csrApprovingController,
  csrSigningController,
  clusterRoleAggregationController,
];
