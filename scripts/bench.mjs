#!/usr/bin/env node
// `npm run bench`: builds, then runs every benchmark; each figure is printed beside a
// baseline measured in the same run and the ratio. Arguments are passed through
// (e.g. `npm run bench -- --only=gateway --duration=5s`).
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
ensureInstalled();
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const r = spawnSync(process.execPath, ['--expose-gc', 'dist/bench/src/main.js', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
