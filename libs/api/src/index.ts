export * from './catalog-types';
export * from './catalog-data';
export * from './catalog';
export * from './feature-gates';
export * from './schemas';
export * from './protobuf';
export * from './well-known';
export * from './conversion';
export { HPA_BEHAVIOR_ANNOTATION, HPA_CONDITIONS_ANNOTATION, HPA_CURRENT_METRICS_ANNOTATION, HPA_METRICS_ANNOTATION } from './conversions/autoscaling';
