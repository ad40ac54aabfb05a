import { Module } from '@nestjs/common';

/**
 * The gateway's admission plugins: NestJS providers decorated with `@AdmissionPluginProvider()`
 * (pipeline/admit.ts), ordered by ADMISSION_PLUGIN_ORDER. Empty until the admission issue
 * fills it: the admit stage then runs an empty chain.
 */
@Module({ providers: [] })
export class AdmissionModule {}
