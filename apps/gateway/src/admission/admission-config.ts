// The admission configuration file (--admission-control-config-file): an AdmissionConfiguration
// giving plugins their configuration, inline or in a file of its own (upstream
// apiserver.config.k8s.io/v1 AdmissionConfiguration). Read once at start; a file that cannot be
// used fails start-up with every problem named by field.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';

/** apiVersions of an AdmissionConfiguration (orch brand and upstream spellings, v1 and v1alpha1). */
export const ADMISSION_CONFIG_VERSIONS = ['apiserver.config.orch.io/v1', 'apiserver.config.k8s.io/v1', 'apiserver.orch.io/v1alpha1', 'apiserver.k8s.io/v1alpha1'];

/** A configuration that cannot be used; `errors` name each field (`plugins[0].name: Required value`). */
export class AdmissionConfigError extends Error {
  override name = 'AdmissionConfigError';
  constructor(
    readonly source: string,
    readonly errors: string[],
  ) {
    super(`${source}: invalid admission configuration: ${errors.join('; ')}`);
  }
}

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseDocument(text: string, source: string): unknown {
  try {
    return parse(text);
  } catch (e) {
    throw new AdmissionConfigError(source, [`not YAML or JSON: ${(e as Error).message}`]);
  }
}

function readDocument(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AdmissionConfigError(file, [`cannot read the file: ${(e as Error).message}`]);
  }
  return parseDocument(text, file);
}

/**
 * The configuration of each plugin the file names (plugin name → its configuration document).
 * A `path` is read relative to the configuration file. No file: no configuration.
 */
export function readAdmissionConfiguration(file: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!file) return out;
  const doc = readDocument(file);
  const errs: string[] = [];
  const named = new Set<string>();
  if (!isObj(doc)) throw new AdmissionConfigError(file, ['the document must be an object']);
  if (!ADMISSION_CONFIG_VERSIONS.includes(String(doc.apiVersion))) errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: ${ADMISSION_CONFIG_VERSIONS.map((v) => JSON.stringify(v)).join(', ')}`);
  if (doc.kind !== 'AdmissionConfiguration') errs.push(`kind: Unsupported value: ${JSON.stringify(doc.kind)}: supported values: "AdmissionConfiguration"`);
  for (const k of Object.keys(doc)) if (!['apiVersion', 'kind', 'plugins'].includes(k)) errs.push(`${k}: unknown field`);
  const plugins = doc.plugins ?? [];
  if (!Array.isArray(plugins)) throw new AdmissionConfigError(file, [...errs, 'plugins: must be a list']);
  plugins.forEach((p: unknown, i: number) => {
    const at = `plugins[${i}]`;
    if (!isObj(p)) return void errs.push(`${at}: must be an object`);
    const name = typeof p.name === 'string' ? p.name : '';
    if (!name) return void errs.push(`${at}.name: Required value`);
    if (named.has(name)) return void errs.push(`${at}.name: Duplicate value: ${JSON.stringify(name)}`);
    named.add(name);
    if (p.path !== undefined && p.configuration !== undefined) return void errs.push(`${at}: path and configuration are mutually exclusive`);
    if (p.path !== undefined) {
      if (typeof p.path !== 'string' || !p.path) return void errs.push(`${at}.path: Invalid value: must be a file name`);
      try {
        out.set(name, readDocument(isAbsolute(p.path) ? p.path : resolve(dirname(file), p.path)));
      } catch (e) {
        errs.push(`${at}.path: ${(e as AdmissionConfigError).errors?.join('; ') ?? (e as Error).message}`);
      }
    } else if (p.configuration !== undefined) {
      if (!isObj(p.configuration)) return void errs.push(`${at}.configuration: must be an object`);
      out.set(name, p.configuration);
    }
  });
  if (errs.length) throw new AdmissionConfigError(file, errs);
  return out;
}

/** Checks the apiVersion and kind of a plugin's configuration document; returns the problems. */
export function checkTypeMeta(doc: Obj, versions: readonly string[], kind: string): string[] {
  const errs: string[] = [];
  if (doc.apiVersion !== undefined && !versions.includes(String(doc.apiVersion))) errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: ${versions.map((v) => JSON.stringify(v)).join(', ')}`);
  if (doc.kind !== undefined && doc.kind !== kind) errs.push(`kind: Unsupported value: ${JSON.stringify(doc.kind)}: supported values: ${JSON.stringify(kind)}`);
  return errs;
}
