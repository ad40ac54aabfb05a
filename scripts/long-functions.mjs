#!/usr/bin/env node
// Lists the functions longer than a limit (default 100 lines) in TypeScript sources, read with
// the TypeScript compiler's parser: function declarations and expressions, arrow functions,
// methods, constructors and accessors, by their body's first to last line. Spec files and
// generated types are left out. Usage:
//   node scripts/long-functions.mjs [--max=100] [--count] [dir ...]   (default dirs: apps libs)
// Prints `path:line name (N lines)` per function, longest first, then a total; exits 0.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const args = process.argv.slice(2);
const max = Number(args.find((a) => a.startsWith('--max='))?.slice('--max='.length) ?? 100);
const countOnly = args.includes('--count');
const dirs = args.filter((a) => !a.startsWith('--'));

async function* sources(dir) {
  for (const d of await readdir(dir, { withFileTypes: true })) {
    if (d.name === 'node_modules' || d.name === 'dist' || d.name === 'generated' || d.name.startsWith('.')) continue;
    const p = join(dir, d.name);
    if (d.isDirectory()) yield* sources(p);
    else if (/\.(ts|tsx|mts)$/.test(d.name) && !/\.(spec|test)\.tsx?$/.test(d.name) && !d.name.endsWith('.d.ts')) yield p;
  }
}

/** The name a reader would search for: `Class.method`, `function`, `const x = () =>`. */
function nameOf(node) {
  const own = node.name && ts.isIdentifier(node.name) ? node.name.text : node.name?.getText();
  const parent = node.parent;
  if (own) {
    const cls = ts.isClassLike(parent) && parent.name ? `${parent.name.text}.` : '';
    return cls + own;
  }
  if (ts.isConstructorDeclaration(node)) return `${parent.name?.text ?? '(class)'}.constructor`;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText();
  return '(anonymous)';
}

function longFunctions(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.body.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) found.push({ file, line: first + 1, name: nameOf(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const all = [];
for (const dir of dirs.length ? dirs : ['apps', 'libs']) {
  for await (const file of sources(join(root, dir))) all.push(...longFunctions(relative(root, file), await readFile(file, 'utf8')));
}
all.sort((a, b) => b.lines - a.lines);
if (!countOnly) for (const f of all) console.log(`${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
console.log(`${all.length} function(s) over ${max} lines`);
