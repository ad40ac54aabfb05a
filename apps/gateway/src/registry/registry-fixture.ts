import { join } from 'node:path';
import { openSqliteStore, type Store } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { WatchCache } from '@orch/watch';
import type { RegistryOptions } from './store-types';

// For the registry's int specs (never imported by the gateway itself).

/** Registry options of the int specs: short waits, no watch-list. */
export const TEST_REGISTRY_OPTIONS: RegistryOptions = { continueTokenLifetimeMs: 60_000, tooLargeResourceVersionWaitMs: 1000, bookmarkIntervalMs: 60_000, watchListEnabled: false };

export interface RegistryFixture {
  /** The store, as `wrap` returned it. */
  store: Store;
  cache: WatchCache;
  /** Stops the cache, closes the store, removes its directory. */
  close(): Promise<void>;
}

/** A real SQLite store in a temporary directory (wrapped, e.g. to count its calls) and a started watch cache over it. */
export async function openRegistryFixture(name: string, wrap: (store: Store) => Store = (s) => s): Promise<RegistryFixture> {
  const dir = await tempDir(`${name}-`);
  const real = await openSqliteStore(join(dir, 'db'));
  const store = wrap(real);
  const cache = new WatchCache(store, { prefix: '/registry/', log: () => undefined });
  await cache.start();
  return {
    store,
    cache,
    close: async () => {
      cache.stop();
      await real.close();
      await removeDir(dir);
    },
  };
}
