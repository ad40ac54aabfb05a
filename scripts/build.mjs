#!/usr/bin/env node
// Compiles TypeScript sources to dist/ with swc (the tree under dist mirrors the source
// tree) and links the @orch/* libraries under dist/node_modules so that compiled code
// resolves them with Node's ordinary lookup. Usage: build.mjs [projectDir ...] (default: all).
// Projects with a ui/vite.config.mjs (the dashboard) also get their browser bundle built by Vite
// into dist/<projectDir>/ui; bundles are build output, never committed.
import { transformFile } from '@swc/core';
import { mkdir, readdir, writeFile, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const swcrc = JSON.parse(await readFile(join(root, '.swcrc'), 'utf8'));
delete swcrc.$schema;

async function projectDirs() {
  const out = [];
  for (const top of ['libs', 'apps']) {
    for (const d of await readdir(join(root, top), { withFileTypes: true })) if (d.isDirectory()) out.push(`${top}/${d.name}`);
  }
  out.push('bench');
  return out;
}

async function* sources(dir) {
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) yield* sources(p);
    else if (d.name.endsWith('.ts') && !d.name.endsWith('.spec.ts') && !d.name.endsWith('.d.ts')) yield p;
  }
}

async function compile(projectDir) {
  const srcDir = join(root, projectDir, 'src');
  const jobs = [];
  for await (const file of sources(srcDir)) {
    jobs.push(
      (async () => {
        const out = join(root, 'dist', relative(root, file)).replace(/\.ts$/, '.js');
        const { code, map } = await transformFile(file, { ...swcrc, swcrc: false, filename: file, sourceMaps: true });
        await mkdir(dirname(out), { recursive: true });
        await writeFile(out, `${code}\n//# sourceMappingURL=${out.split('/').pop()}.map`);
        if (map) await writeFile(`${out}.map`, map);
      })(),
    );
  }
  await Promise.all(jobs);
  return jobs.length;
}

/** Newest modification time (ms) of the files under dir, recursively; 0 when dir is missing. */
async function newestMtime(dir) {
  let newest = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const d of entries) {
    const p = join(dir, d.name);
    newest = Math.max(newest, d.isDirectory() ? await newestMtime(p) : (await stat(p)).mtimeMs);
  }
  return newest;
}

/**
 * Builds a project's browser UI with Vite when it has one (ui/vite.config.mjs) and its sources,
 * the library files the last bundle was made from (`@orch/api/catalog`...), or the lock file
 * changed since the last bundle; returns whether it built.
 */
async function buildUi(projectDir) {
  const uiDir = join(root, projectDir, 'ui');
  const configFile = join(uiDir, 'vite.config.mjs');
  const built = join(root, 'dist', projectDir, 'ui', 'index.html');
  // Outside the served folder: the bundle's input files, recorded when it is built.
  const inputsFile = join(root, 'dist', projectDir, 'ui-inputs.json');
  const sourcesAt = await newestMtime(uiDir);
  if (!sourcesAt) return false;
  const builtAt = await stat(built).then((s) => s.mtimeMs, () => 0);
  const lockAt = (await stat(join(root, 'package-lock.json'))).mtimeMs;
  const inputs = await readFile(inputsFile, 'utf8').then(JSON.parse, () => undefined);
  // A recorded input gone counts as changed.
  const inputsAt = inputs ? Math.max(0, ...(await Promise.all(inputs.map((f) => stat(join(root, f)).then((s) => s.mtimeMs, () => Infinity))))) : Infinity;
  if (builtAt > sourcesAt && builtAt > lockAt && builtAt > inputsAt) return false;
  const { build } = await import('vite');
  const outputs = await build({ configFile, logLevel: 'warn' });
  const modules = [outputs].flat().flatMap((o) => o.output.flatMap((chunk) => chunk.moduleIds ?? []));
  const files = modules.filter((id) => id.startsWith(root) && !id.includes('/node_modules/') && !id.startsWith(uiDir)).map((id) => relative(root, id));
  await writeFile(inputsFile, JSON.stringify([...new Set(files)].sort(), null, 2));
  return true;
}

async function linkLibraries() {
  const tsconfig = JSON.parse(await readFile(join(root, 'tsconfig.base.json'), 'utf8'));
  for (const [alias, [target]] of Object.entries(tsconfig.compilerOptions.paths)) {
    const pkgDir = join(root, 'dist', 'node_modules', alias);
    await mkdir(pkgDir, { recursive: true });
    const main = relative(pkgDir, join(root, 'dist', target.replace(/\.ts$/, '.js')));
    await writeFile(join(pkgDir, 'package.json'), JSON.stringify({ name: alias, main }, null, 2));
  }
}

const started = Date.now();
const dirs = process.argv.length > 2 ? process.argv.slice(2) : await projectDirs();
let files = 0;
let bundles = 0;
for (const d of dirs) {
  files += await compile(d);
  if (await buildUi(d)) bundles++;
}
await linkLibraries();
console.log(`built ${files} files${bundles ? ` and ${bundles} UI bundle(s)` : ''} from ${dirs.length} project(s) in ${Date.now() - started} ms`);
