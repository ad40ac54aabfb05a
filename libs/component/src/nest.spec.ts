import { Inject, Injectable, Module, type BeforeApplicationShutdown, type Provider, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { COMPONENT_CONTEXT, ComponentTasks, createComponentApplication, globalModule, runComponentModule } from './nest';
import { testComponentContext } from './testing';

/** What a test component does, in order: hooks and loop steps. */
type Journal = string[];

/** A component with one provider: a loop started at bootstrap (`loop` decides how it ends), hooks journaled. */
function component(journal: Journal, loop: (signal: AbortSignal) => Promise<void>, init: () => Promise<void> = async () => undefined): DynamicModule {
  @Injectable()
  class Part implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
    constructor(
      @Inject(ComponentTasks) private readonly tasks: ComponentTasks,
      @Inject(COMPONENT_CONTEXT) private readonly ctx: { name: string },
    ) {}

    async onModuleInit() {
      journal.push(`init ${this.ctx.name}`);
      await init();
    }

    onApplicationBootstrap() {
      journal.push('bootstrap');
      this.tasks.run('the loop', async (signal) => {
        journal.push('loop started');
        await loop(signal);
        journal.push('loop returned');
      });
      this.tasks.run('a second loop', (signal) => until(signal).then(() => void journal.push('second loop returned')));
    }

    beforeApplicationShutdown() {
      journal.push('before shutdown');
    }

    onApplicationShutdown() {
      journal.push('shutdown');
    }
  }
  @Module({ providers: [Part] })
  class PartModule {}
  return { module: PartModule };
}

const until = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
/** The context runComponent would hand over (its client points nowhere: nothing here calls the API). */
const ctx = testComponentContext('test-component', {}, [], { server: 'https://127.0.0.1:1' });
afterAll(() => ctx.client.close());

describe('runComponentModule', () => {
  it.each<{ name: string; loop: (signal: AbortSignal) => Promise<void>; stopAfterMs?: number; want: string | undefined }>([
    // The run signal ends every loop; the application closes once they returned.
    { name: 'runs until the run signal aborts', loop: until, stopAfterMs: 20, want: undefined },
    // The first failure stops the component: the other loops get the abort, then the application closes.
    { name: 'stops on the first loop failure and rejects with it', loop: () => Promise.reject(new Error('lost the store')), want: 'the loop: lost the store' },
  ])('$name, closing the application after every loop returned', async ({ loop, stopAfterMs, want }) => {
    const journal: Journal = [];
    const stop = new AbortController();
    if (stopAfterMs !== undefined) setTimeout(() => stop.abort(), stopAfterMs);
    const run = runComponentModule(ctx, stop.signal, component(journal, loop));
    if (want) await expect(run).rejects.toThrow(want);
    else await expect(run).resolves.toBeUndefined();
    const ran = want ? ['loop started'] : ['loop started', 'loop returned'];
    expect(journal).toEqual(['init test-component', 'bootstrap', ...ran, 'second loop returned', 'before shutdown', 'shutdown']);
  });

  it('starts no loop when the component stops during start-up', async () => {
    const journal: Journal = [];
    const stop = new AbortController();
    await runComponentModule(ctx, stop.signal, component(journal, until, async () => stop.abort()));
    expect(journal).toEqual(['init test-component', 'bootstrap', 'before shutdown', 'shutdown']);
  });

  it('rejects with the error of a provider that fails to start', async () => {
    const journal: Journal = [];
    const failing = component(journal, until, () => Promise.reject(new Error('--port: address in use')));
    await expect(runComponentModule(ctx, new AbortController().signal, failing)).rejects.toThrow('--port: address in use');
    expect(journal).toEqual(['init test-component']);
  });
});

describe('globalModule', () => {
  const TOKEN = Symbol('Shared');
  @Injectable()
  class SharedClass {
    readonly from = 'class';
  }

  it.each<{ kind: string; provider: Provider; token: unknown; want: unknown }>([
    { kind: 'a class', provider: SharedClass, token: SharedClass, want: { from: 'class' } },
    { kind: 'a value', provider: { provide: TOKEN, useValue: { from: 'value' } }, token: TOKEN, want: { from: 'value' } },
    { kind: 'a factory', provider: { provide: TOKEN, useFactory: (c: { name: string }) => ({ from: c.name }), inject: [COMPONENT_CONTEXT] }, token: TOKEN, want: { from: 'test-component' } },
  ])('exports $kind provider to a module that does not import it', async ({ provider, token, want }) => {
    @Injectable()
    class Reader {
      constructor(@Inject(token as symbol) readonly shared: unknown) {}
    }
    @Module({ providers: [Reader] })
    class ReaderModule {}
    @Module({})
    class AppModule {}
    const app = await createComponentApplication(ctx, new AbortController().signal, { module: AppModule, imports: [globalModule('SharedModule', [provider]), ReaderModule] });
    try {
      expect(app.get(Reader).shared).toMatchObject(want as object);
    } finally {
      await app.close();
    }
  });
});
