import { FieldError } from '@orch/apimachinery';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_SCHEDULER_NAME } from './api';
import type { Registry } from './interface';

// The scheduler configuration file (upstream KubeSchedulerConfiguration v1, as
// `apiVersion: orch.io/v1`, `kind: SchedulerConfiguration`) and how a profile's plugin sets
// are merged with the default plugins.

export const CONFIG_API_VERSION = 'orch.io/v1';
export const CONFIG_KIND = 'SchedulerConfiguration';

export const EXTENSION_POINTS = [
  'queueSort',
  'preFilter',
  'filter',
  'postFilter',
  'preScore',
  'score',
  'reserve',
  'permit',
  'preBind',
  'bind',
  'postBind',
] as const;
export type ExtensionPoint = (typeof EXTENSION_POINTS)[number];

export interface PluginRef {
  name: string;
  /** Score weight (score and multiPoint only); 0 or absent means 1 unless a default says otherwise. */
  weight?: number;
}

export interface PluginSet {
  enabled?: PluginRef[];
  /** Names to remove from the defaults; `*` removes them all. */
  disabled?: PluginRef[];
}

/** Plugin sets per extension point; `multiPoint` enables a plugin at every point it implements. */
export type PluginsConfig = Partial<Record<ExtensionPoint | 'multiPoint', PluginSet>>;

export interface PluginConfigEntry {
  name: string;
  args?: unknown;
}

export interface ProfileConfig {
  schedulerName: string;
  /** Overrides the global value for this profile. */
  percentageOfNodesToScore?: number;
  plugins?: PluginsConfig;
  pluginConfig?: PluginConfigEntry[];
}

export interface SchedulerConfiguration {
  apiVersion: string;
  kind: string;
  /** 0 (default) = adaptive: max(5, 50 − nodes/125) %, at least 100 nodes. */
  percentageOfNodesToScore: number;
  podInitialBackoffSeconds: number;
  podMaxBackoffSeconds: number;
  profiles: ProfileConfig[];
}

/** A configuration that failed validation; `errors` lists every problem. */
export class ConfigError extends Error {
  constructor(readonly errors: FieldError[]) {
    super(`invalid scheduler configuration: ${errors.map((e) => e.toString()).join('; ')}`);
    this.name = 'ConfigError';
  }
}

/** The configuration used when no file is given: one `default-scheduler` profile. */
export function defaultSchedulerConfiguration(): SchedulerConfiguration {
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: CONFIG_KIND,
    percentageOfNodesToScore: 0,
    podInitialBackoffSeconds: 1,
    podMaxBackoffSeconds: 10,
    profiles: [{ schedulerName: DEFAULT_SCHEDULER_NAME }],
  };
}

const TOP_LEVEL_KEYS = new Set(['apiVersion', 'kind', 'percentageOfNodesToScore', 'podInitialBackoffSeconds', 'podMaxBackoffSeconds', 'profiles', 'parallelism']);
const PROFILE_KEYS = new Set(['schedulerName', 'percentageOfNodesToScore', 'plugins', 'pluginConfig']);
const PLUGIN_SET_KEYS: ReadonlySet<string> = new Set(['multiPoint', ...EXTENSION_POINTS]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses a YAML (or JSON) configuration file, applies defaults and validates it against
 * `registry`. Throws ConfigError listing every problem.
 */
export function parseSchedulerConfiguration(text: string, registry: Registry): SchedulerConfiguration {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ConfigError([FieldError.invalid('<file>', undefined, `not valid YAML: ${(e as Error).message}`)]);
  }
  const cfg = decodeSchedulerConfiguration(raw);
  const errs = validateSchedulerConfiguration(cfg, registry);
  if (errs.length) throw new ConfigError(errs);
  return cfg;
}

/** Checks the shape of a decoded document and fills defaults (no registry checks). */
export function decodeSchedulerConfiguration(raw: unknown): SchedulerConfiguration {
  if (!isObject(raw)) throw new ConfigError([FieldError.typeInvalid('<file>', raw, 'expected an object')]);
  const errs: FieldError[] = [];
  for (const k of Object.keys(raw)) if (!TOP_LEVEL_KEYS.has(k)) errs.push(FieldError.invalid(k, undefined, 'unknown field'));
  const def = defaultSchedulerConfiguration();
  const num = (path: string, v: unknown, fallback: number): number => {
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      errs.push(FieldError.typeInvalid(path, v, 'must be a number'));
      return fallback;
    }
    return v;
  };
  const profilesRaw = raw.profiles ?? [];
  const profiles: ProfileConfig[] = [];
  if (!Array.isArray(profilesRaw)) errs.push(FieldError.typeInvalid('profiles', profilesRaw, 'must be a list'));
  else {
    profilesRaw.forEach((p: unknown, i) => {
      const path = `profiles[${i}]`;
      if (!isObject(p)) {
        errs.push(FieldError.typeInvalid(path, p, 'must be an object'));
        return;
      }
      for (const k of Object.keys(p)) if (!PROFILE_KEYS.has(k)) errs.push(FieldError.invalid(`${path}.${k}`, undefined, 'unknown field'));
      const prof: ProfileConfig = { schedulerName: typeof p.schedulerName === 'string' ? p.schedulerName : DEFAULT_SCHEDULER_NAME };
      if (p.schedulerName !== undefined && typeof p.schedulerName !== 'string') errs.push(FieldError.typeInvalid(`${path}.schedulerName`, p.schedulerName, 'must be a string'));
      if (p.percentageOfNodesToScore !== undefined) prof.percentageOfNodesToScore = num(`${path}.percentageOfNodesToScore`, p.percentageOfNodesToScore, 0);
      if (p.plugins !== undefined) prof.plugins = decodePlugins(p.plugins, `${path}.plugins`, errs);
      if (p.pluginConfig !== undefined) prof.pluginConfig = decodePluginConfig(p.pluginConfig, `${path}.pluginConfig`, errs);
      profiles.push(prof);
    });
  }
  const cfg: SchedulerConfiguration = {
    apiVersion: typeof raw.apiVersion === 'string' ? raw.apiVersion : '',
    kind: typeof raw.kind === 'string' ? raw.kind : '',
    percentageOfNodesToScore: num('percentageOfNodesToScore', raw.percentageOfNodesToScore, def.percentageOfNodesToScore),
    podInitialBackoffSeconds: num('podInitialBackoffSeconds', raw.podInitialBackoffSeconds, def.podInitialBackoffSeconds),
    podMaxBackoffSeconds: num('podMaxBackoffSeconds', raw.podMaxBackoffSeconds, def.podMaxBackoffSeconds),
    profiles: profiles.length ? profiles : def.profiles,
  };
  if (errs.length) throw new ConfigError(errs);
  return cfg;
}

function decodePluginRefs(v: unknown, path: string, errs: FieldError[]): PluginRef[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    errs.push(FieldError.typeInvalid(path, v, 'must be a list'));
    return [];
  }
  const out: PluginRef[] = [];
  v.forEach((r: unknown, i) => {
    if (!isObject(r) || typeof r.name !== 'string' || r.name === '') {
      errs.push(FieldError.required(`${path}[${i}].name`));
      return;
    }
    if (r.weight !== undefined && (typeof r.weight !== 'number' || !Number.isInteger(r.weight))) {
      errs.push(FieldError.typeInvalid(`${path}[${i}].weight`, r.weight, 'must be an integer'));
      return;
    }
    out.push(r.weight === undefined ? { name: r.name } : { name: r.name, weight: r.weight });
  });
  return out;
}

function decodePlugins(v: unknown, path: string, errs: FieldError[]): PluginsConfig {
  if (!isObject(v)) {
    errs.push(FieldError.typeInvalid(path, v, 'must be an object'));
    return {};
  }
  const out: PluginsConfig = {};
  for (const [k, set] of Object.entries(v)) {
    if (!PLUGIN_SET_KEYS.has(k)) {
      errs.push(FieldError.notSupported(`${path}.${k}`, k, ['multiPoint', ...EXTENSION_POINTS]));
      continue;
    }
    if (!isObject(set)) {
      errs.push(FieldError.typeInvalid(`${path}.${k}`, set, 'must be an object'));
      continue;
    }
    out[k as ExtensionPoint] = {
      enabled: decodePluginRefs(set.enabled, `${path}.${k}.enabled`, errs),
      disabled: decodePluginRefs(set.disabled, `${path}.${k}.disabled`, errs),
    };
  }
  return out;
}

function decodePluginConfig(v: unknown, path: string, errs: FieldError[]): PluginConfigEntry[] {
  if (!Array.isArray(v)) {
    errs.push(FieldError.typeInvalid(path, v, 'must be a list'));
    return [];
  }
  const out: PluginConfigEntry[] = [];
  v.forEach((e: unknown, i) => {
    if (!isObject(e) || typeof e.name !== 'string' || e.name === '') errs.push(FieldError.required(`${path}[${i}].name`));
    else out.push({ name: e.name, args: e.args });
  });
  return out;
}

/** Every problem with a decoded configuration (upstream ValidateKubeSchedulerConfiguration). */
export function validateSchedulerConfiguration(cfg: SchedulerConfiguration, registry: Registry): FieldError[] {
  const errs: FieldError[] = [];
  if (cfg.apiVersion !== CONFIG_API_VERSION) errs.push(FieldError.notSupported('apiVersion', cfg.apiVersion, [CONFIG_API_VERSION]));
  if (cfg.kind !== CONFIG_KIND) errs.push(FieldError.notSupported('kind', cfg.kind, [CONFIG_KIND]));
  const checkPercentage = (path: string, v: number): void => {
    if (v < 0 || v > 100) errs.push(FieldError.invalid(path, v, 'not in valid range [0-100]'));
  };
  checkPercentage('percentageOfNodesToScore', cfg.percentageOfNodesToScore);
  if (cfg.podInitialBackoffSeconds <= 0) errs.push(FieldError.invalid('podInitialBackoffSeconds', cfg.podInitialBackoffSeconds, 'must be greater than 0'));
  if (cfg.podMaxBackoffSeconds < cfg.podInitialBackoffSeconds) {
    errs.push(FieldError.invalid('podMaxBackoffSeconds', cfg.podMaxBackoffSeconds, 'must be greater than or equal to PodInitialBackoffSeconds'));
  }
  const names = new Set<string>();
  cfg.profiles.forEach((p, i) => {
    const path = `profiles[${i}]`;
    if (!p.schedulerName) errs.push(FieldError.required(`${path}.schedulerName`));
    else if (names.has(p.schedulerName)) errs.push(FieldError.duplicate(`${path}.schedulerName`, p.schedulerName));
    names.add(p.schedulerName);
    if (p.percentageOfNodesToScore !== undefined) checkPercentage(`${path}.percentageOfNodesToScore`, p.percentageOfNodesToScore);
    for (const [point, set] of Object.entries(p.plugins ?? {})) {
      set?.enabled?.forEach((r, j) => {
        const at = `${path}.plugins.${point}.enabled[${j}]`;
        if (!registry[r.name]) errs.push(FieldError.invalid(`${at}.name`, r.name, 'plugin not found in the registry'));
        if (r.weight !== undefined && r.weight < 0) errs.push(FieldError.invalid(`${at}.weight`, r.weight, 'must be a non-negative integer'));
        if (r.weight !== undefined && point !== 'score' && point !== 'multiPoint') errs.push(FieldError.forbidden(`${at}.weight`, 'only score and multiPoint plugins have weights'));
      });
      set?.disabled?.forEach((r, j) => {
        if (r.name !== '*' && !registry[r.name]) errs.push(FieldError.invalid(`${path}.plugins.${point}.disabled[${j}].name`, r.name, 'plugin not found in the registry'));
      });
    }
    const seen = new Set<string>();
    p.pluginConfig?.forEach((pc, j) => {
      const at = `${path}.pluginConfig[${j}]`;
      if (seen.has(pc.name)) errs.push(FieldError.duplicate(`${at}.name`, pc.name));
      seen.add(pc.name);
      const reg = registry[pc.name];
      if (!reg) errs.push(FieldError.invalid(`${at}.name`, pc.name, 'plugin not found in the registry'));
      else if (pc.args !== undefined) errs.push(...(reg.validateArgs?.(pc.args, `${at}.args`) ?? []));
    });
  });
  return errs;
}

/**
 * upstream mergePluginSet: the default enabled plugins minus the disabled ones (all with
 * `*`), a custom entry with a default's name replacing it in place, other custom entries
 * appended in order.
 */
export function mergePluginSet(defaults: PluginSet, custom: PluginSet | undefined): PluginSet {
  if (!custom) return { enabled: [...(defaults.enabled ?? [])], disabled: [] };
  const disabled = new Set((custom.disabled ?? []).map((d) => d.name));
  const customByName = new Map((custom.enabled ?? []).map((p, i) => [p.name, i] as const));
  const replaced = new Set<number>();
  const enabled: PluginRef[] = [];
  if (!disabled.has('*')) {
    for (const d of defaults.enabled ?? []) {
      if (disabled.has(d.name)) continue;
      const i = customByName.get(d.name);
      if (i !== undefined) {
        replaced.add(i);
        enabled.push(custom.enabled![i]);
      } else enabled.push(d);
    }
  }
  (custom.enabled ?? []).forEach((p, i) => {
    if (!replaced.has(i)) enabled.push(p);
  });
  return { enabled, disabled: [...(custom.disabled ?? [])] };
}
