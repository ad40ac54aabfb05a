import type { DynamicModule, Provider, Type } from '@nestjs/common';
import type { Controller, ControllerContext, ControllerDescriptor } from './controller';

/** The Nest token of the controller named `name` (its `--controllers` name). */
export function controllerToken(name: string): string {
  return `controller:${name}`;
}

/** Builds the context a controller runs with (its identity's client and event recorder); provided by the app. */
export abstract class ControllerContexts {
  abstract contextFor(descriptor: ControllerDescriptor): Promise<ControllerContext>;
}

/**
 * A module of controllers: one provider per controller of `family` that `enabled` names (the
 * `--controllers` choice), created with the context {@link ControllerContexts} gives it and
 * exported under {@link controllerToken}. A controller not enabled is never constructed, so it
 * obtains no informer.
 */
export function controllerModule(module: Type<unknown>, family: readonly ControllerDescriptor[], enabled: readonly ControllerDescriptor[]): DynamicModule {
  const providers: Provider[] = family
    .filter((d) => enabled.includes(d))
    .map((d) => ({
      provide: controllerToken(d.name),
      useFactory: async (contexts: ControllerContexts): Promise<Controller> => d.create(await contexts.contextFor(d)),
      inject: [ControllerContexts],
    }));
  return { module, providers, exports: providers.map((p) => (p as { provide: string }).provide) };
}
