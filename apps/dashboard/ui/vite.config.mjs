// Builds the dashboard's single-page UI into dist/apps/dashboard/ui (run by scripts/build.mjs).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: join(here, '..', '..', '..', 'dist', 'apps', 'dashboard', 'ui'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 600,
  },
});
