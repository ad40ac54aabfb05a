import { setMaxListeners } from 'node:events';
import { Inject, Injectable, Module, type DynamicModule, type INestApplicationContext, type LogLevel, type Provider, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { FlagDefs } from '@orch/server-common';
import { runComponent, type ComponentContext, type ComponentSpec } from './component';

/** Injection token of the {@link ComponentContext} (flags, client, logger, health, metrics). */
export const COMPONENT_CONTEXT = Symbol('ComponentContext');
/** Injection token of the run signal: it aborts when the component stops (SIGINT, SIGTERM, lost leadership). */
export const RUN_SIGNAL = Symbol('RunSignal');

/**
 * The long-running loops of a component's providers (status loops, work queues, watch
 * handlers). A provider starts its loop in `onApplicationBootstrap` with {@link run}; the loop
 * gets {@link signal}, which aborts when the component stops or when any loop fails, and must
 * return soon after. {@link runComponentModule} waits for every loop to return before it closes
 * the application, so no shutdown hook races a loop that is still working.
 */
@Injectable()
export class ComponentTasks {
  private readonly stop = new AbortController();
  private readonly loops = new Set<Promise<void>>();
  private failure?: Error;

  constructor(@Inject(RUN_SIGNAL) run: AbortSignal) {
    // Every loop, and every worker a loop starts, may listen on the one signal.
    setMaxListeners(0, this.stop.signal);
    if (run.aborted) this.stop.abort();
    else run.addEventListener('abort', () => this.stop.abort(), { once: true });
  }

  /** Aborts when the component stops or a loop failed. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** Starts `loop` (not when the component is stopping already); its failure stops the component. */
  run(name: string, loop: (signal: AbortSignal) => Promise<void>): void {
    if (this.stop.signal.aborted) return;
    const done = loop(this.stop.signal).catch((err: unknown) => {
      this.failure ??= new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      this.stop.abort();
    });
    this.loops.add(done);
  }

  /** Resolves once the signal aborted and every loop returned; rejects with the first loop failure. */
  async settled(): Promise<void> {
    const signal = this.stop.signal;
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.all(this.loops);
    if (this.failure) throw this.failure;
  }
}

/**
 * A global dynamic module (Nest's `global: true`) of its own class, named `name` (in Nest's
 * messages): every provider of `providers` is exported, so every module of the application can
 * inject it without importing the module. For what every part of an application reads (its
 * options, context and composition root).
 */
export function globalModule(name: string, providers: Provider[]): DynamicModule {
  const module = { [name]: class {} }[name];
  Module({})(module);
  return { module, global: true, providers, exports: providers.map((p) => ('provide' in p ? p.provide : p)) };
}

@Module({})
class ComponentRootModule {}

/**
 * Builds a component's Nest application context for one run of `runComponent` (its `run`
 * hook): `app` under the core module that provides {@link COMPONENT_CONTEXT}, {@link RUN_SIGNAL}
 * and {@link ComponentTasks}; resolves once every provider ran `onModuleInit`, then
 * `onApplicationBootstrap` (deepest modules first), and rejects with the first start-up error.
 * Nest only wires objects here: it is on no request path.
 */
export async function createComponentApplication<D extends FlagDefs>(
  ctx: ComponentContext<D>,
  signal: AbortSignal,
  app: DynamicModule | Type,
  logger: LogLevel[] | false = ['error', 'warn'],
): Promise<INestApplicationContext> {
  const root: DynamicModule = {
    module: ComponentRootModule,
    imports: [
      // What the component runtime gives every provider: the context, the run signal and the loops.
      globalModule('ComponentCoreModule', [{ provide: COMPONENT_CONTEXT, useValue: ctx }, { provide: RUN_SIGNAL, useValue: signal }, ComponentTasks]),
      app,
    ],
  };
  return NestFactory.createApplicationContext(root, { logger, abortOnError: false });
}

/**
 * Runs a component's application ({@link createComponentApplication}) until `signal` aborts or
 * a loop of {@link ComponentTasks} fails, waits for the loops, then closes the application
 * (beforeApplicationShutdown, then onApplicationShutdown, the root module's first; the context
 * last). Rejects with the start-up error or the first loop failure.
 */
export async function runComponentModule<D extends FlagDefs>(ctx: ComponentContext<D>, signal: AbortSignal, app: DynamicModule | Type): Promise<void> {
  const context = await createComponentApplication(ctx, signal, app);
  try {
    await context.get(ComponentTasks).settled();
  } finally {
    await context.close();
  }
}

/** A component whose main loop is its Nest application: `module` builds it from the context. */
export interface ModuleComponentSpec<D extends FlagDefs> extends Omit<ComponentSpec<D>, 'run'> {
  /** The application {@link runComponentModule} runs while leading (or always without leader election). */
  module(ctx: ComponentContext<D>): DynamicModule | Type;
}

/**
 * The main of a component process: {@link runComponent} with the application `spec.module`
 * builds as its main loop, on `argv` (or what the promise resolves to: arguments a start-up
 * step prepared first). A start-up error is printed as `<name>: <message>` and exits 1.
 */
export function componentMain<D extends FlagDefs>(spec: ModuleComponentSpec<D>, argv: readonly string[] | Promise<readonly string[]> = process.argv.slice(2)): void {
  const { module, ...rest } = spec;
  Promise.resolve(argv)
    .then((args) => runComponent({ ...rest, run: (ctx, signal) => runComponentModule(ctx, signal, module(ctx)) }, args))
    .catch((err: unknown) => {
      console.error(`${spec.name}: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
}
