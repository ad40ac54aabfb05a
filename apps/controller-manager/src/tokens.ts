// Nest injection tokens of what the component runtime hands the controller-manager's application.

/** The component runtime's context (`ControllerManagerComponent`): flags, client, logger, metrics, identity. */
export const COMPONENT = Symbol('ControllerManagerComponent');
/** The run signal (`AbortSignal`): aborts when the process stops or leadership is lost. */
export const RUN_SIGNAL = Symbol('RunSignal');
/** The `ControllerContext` of the controller-manager's own identity, shared by controllers without one. */
export const SHARED_CONTROLLER_CONTEXT = Symbol('SharedControllerContext');
