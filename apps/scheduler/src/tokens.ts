// Nest injection tokens of the scheduler's application.

/** The component runtime's context (`SchedulerComponent`): flags, client, logger, metrics, identity. */
export const COMPONENT = Symbol('SchedulerComponent');
/** The run signal (`AbortSignal`): aborts when the process stops or leadership is lost. */
export const RUN_SIGNAL = Symbol('RunSignal');
/** The plugin registry (`Registry`): every plugin a profile may name, by name. */
export const PLUGIN_REGISTRY = Symbol('PluginRegistry');
/** The checked `SchedulerConfiguration` the scheduler runs with. */
export const SCHEDULER_CONFIGURATION = Symbol('SchedulerConfiguration');
