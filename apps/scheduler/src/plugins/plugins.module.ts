import { Module } from '@nestjs/common';
import { PLUGIN_REGISTRY } from '../tokens';
import { inTreeRegistry } from './registry';

/** Registers the in-tree plugins (`plugins/registry.ts`) as the scheduler's plugin registry. */
@Module({
  providers: [{ provide: PLUGIN_REGISTRY, useValue: inTreeRegistry }],
  exports: [PLUGIN_REGISTRY],
})
export class InTreePluginsModule {}
