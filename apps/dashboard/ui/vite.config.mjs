// Builds the dashboard's single-page UI into dist/apps/dashboard/ui (run by scripts/build.mjs).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));

// The library modules the UI imports (`@orch/api/catalog`), from the UI's tsconfig paths: one
// list for the type check and the bundle.
const { paths } = JSON.parse(readFileSync(join(here, 'tsconfig.json'), 'utf8')).compilerOptions;
const alias = Object.fromEntries(Object.entries(paths).map(([name, [target]]) => [name, join(here, target)]));

export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  resolve: { alias },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: join(here, '..', '..', '..', 'dist', 'apps', 'dashboard', 'ui'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 600,
  },
});
