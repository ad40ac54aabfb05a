// Nest injection tokens of the scheduler's application (the component's context, run signal and
// loops are libs/component's COMPONENT_CONTEXT, RUN_SIGNAL and ComponentTasks).

/** The plugin registry (`Registry`): every plugin a profile may name, by name. */
export const PLUGIN_REGISTRY = Symbol('PluginRegistry');
/** The checked `SchedulerConfiguration` the scheduler runs with. */
export const SCHEDULER_CONFIGURATION = Symbol('SchedulerConfiguration');
