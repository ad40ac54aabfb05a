import { Module } from '@nestjs/common';
import { AdmissionState } from './admission-state';
import { DefaultIngressClass, DefaultStorageClass } from './default-class/default-class';
import { DefaultTolerationSeconds } from './default-toleration-seconds/default-toleration-seconds';
import { LimitRanger } from './limit-ranger/limit-ranger';
import { NamespaceLifecycle } from './namespace-lifecycle/namespace-lifecycle';
import { NodeRestriction } from './node-restriction';
import { PodNodeSelector } from './pod-node-selector/pod-node-selector';
import { PodSecurity } from './pod-security/pod-security';
import { PodTolerationRestriction } from './pod-toleration-restriction/pod-toleration-restriction';
import { PolicyTypeChecker } from './policy/type-checking';
import { MutatingAdmissionPolicyPlugin } from './policy/mutating-admission-policy';
import { ValidatingAdmissionPolicyPlugin } from './policy/validating-admission-policy';
import { Priority } from './priority/priority';
import { ResourceQuota } from './resource-quota/resource-quota';
import { ServiceAccount } from './service-account/service-account';
import { MutatingAdmissionWebhook, ValidatingAdmissionWebhook } from './webhook/webhooks';

/**
 * The gateway's admission plugins: NestJS providers decorated with `@AdmissionPluginProvider()`
 * (pipeline/admit.ts). PipelineComposer keeps those --enable-admission-plugins and
 * --disable-admission-plugins select (plugins.ts) and orders them as upstream does.
 */
@Module({
  providers: [
    AdmissionState,
    NamespaceLifecycle,
    LimitRanger,
    ServiceAccount,
    PodSecurity,
    PodNodeSelector,
    Priority,
    DefaultTolerationSeconds,
    PodTolerationRestriction,
    DefaultStorageClass,
    DefaultIngressClass,
    MutatingAdmissionWebhook,
    MutatingAdmissionPolicyPlugin,
    ValidatingAdmissionPolicyPlugin,
    PolicyTypeChecker,
    ValidatingAdmissionWebhook,
    ResourceQuota,
    NodeRestriction,
  ],
  exports: [AdmissionState],
})
export class AdmissionModule {}
