import { Worker, WorkerOptions } from 'node:worker_threads';

/**
 * JavaScript source that loads the module file `modulePath` in a fresh worker or process.
 * A `.js` file (the compiled build) is required as is; a `.ts` file (running from sources,
 * e.g. under jest) is compiled on load with @swc/core, a dev dependency, as are the
 * relative `.ts` modules it requires.
 */
export function moduleRunnerSource(modulePath: string): string {
  if (!modulePath.endsWith('.ts')) return `require(${JSON.stringify(modulePath)});`;
  const swcPath = require.resolve('@swc/core');
  return `
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const swc = require(${JSON.stringify(swcPath)});
Module._extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(readFileSync(filename, 'utf8'), {
    filename,
    swcrc: false,
    sourceMaps: 'inline',
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
require(${JSON.stringify(modulePath)});
`;
}

/** Starts a worker thread running the module file `modulePath` (see moduleRunnerSource). */
export function startModuleWorker(modulePath: string, options: WorkerOptions = {}): Worker {
  return new Worker(moduleRunnerSource(modulePath), { ...options, eval: true });
}
