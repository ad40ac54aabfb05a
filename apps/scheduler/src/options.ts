import { readFile } from 'node:fs/promises';
import type { ComponentContext } from '@orch/component';
import type { FlagDefs } from '@orch/server-common';
import { defaultSchedulerConfiguration, parseSchedulerConfiguration, type Registry, type SchedulerConfiguration } from './framework';

/** The scheduler's own flags (upstream names); the component runtime adds the common ones. */
export const SCHEDULER_FLAGS = {
  config: { type: 'string', default: '', description: 'Path to a SchedulerConfiguration file (apiVersion orch.io/v1): profiles, plugins, weights, plugin args.' },
} satisfies FlagDefs;

/** What the component runtime hands the scheduler: flags, client, logger, metrics, identity. */
export type SchedulerComponent = ComponentContext<typeof SCHEDULER_FLAGS>;

/** The scheduler's configuration, built once from its flags. */
export interface SchedulerAppOptions {
  /** `--config`: the SchedulerConfiguration file ('' for the default configuration). */
  configFile: string;
}

/** Nest injection token of the {@link SchedulerAppOptions}. */
export const SCHEDULER_APP_OPTIONS = Symbol('SchedulerAppOptions');

export function schedulerAppOptions(component: Pick<SchedulerComponent, 'flags'>): SchedulerAppOptions {
  return { configFile: component.flags.config };
}

/**
 * The SchedulerConfiguration `--config` names, checked against the plugins of `registry`
 * (ConfigError naming the field when it is invalid), else the default configuration.
 */
export async function loadSchedulerConfiguration(options: SchedulerAppOptions, registry: Registry): Promise<SchedulerConfiguration> {
  return options.configFile ? parseSchedulerConfiguration(await readFile(options.configFile, 'utf8'), registry) : defaultSchedulerConfiguration();
}
