import { Module, type DynamicModule } from '@nestjs/common';
import type { ControllerDescriptor } from '../framework/controller';
import { controllerModule } from '../framework/controller-providers';
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

/** The cluster controllers `--controllers` enables, each a provider. */
@Module({})
export class ClusterControllersModule {
  static register(enabled: readonly ControllerDescriptor[]): DynamicModule {
    return controllerModule(ClusterControllersModule, CLUSTER_CONTROLLERS, enabled);
  }
}
