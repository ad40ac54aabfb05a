// Nest injection tokens of the controller-manager's application (the component's context, run
// signal and loops are libs/component's COMPONENT_CONTEXT, RUN_SIGNAL and ComponentTasks).

/** The `ControllerContext` of the controller-manager's own identity, shared by controllers without one. */
export const SHARED_CONTROLLER_CONTEXT = Symbol('SharedControllerContext');
