type Json = Record<string, unknown>;

/**
 * Field names of `events.orch.io/v1` Event and the core `v1` Event holding the same value
 * (upstream pkg/apis/events/v1 conversion); fields not listed have the same name in both.
 */
const EVENTS_V1_TO_CORE: readonly [eventsV1: string, core: string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function renamed(obj: Json, pairs: readonly (readonly [string, string])[]): Json {
  const out: Json = structuredClone(obj);
  for (const [from, to] of pairs) {
    delete out[to];
    if (obj[from] !== undefined) out[to] = structuredClone(obj[from]);
    delete out[from];
  }
  return out;
}

/** `events.orch.io/v1` Event → core `v1` Event (its storage form). */
export function eventsV1ToCoreEvent(obj: Json): Json {
  return renamed(obj, EVENTS_V1_TO_CORE);
}

/** core `v1` Event → `events.orch.io/v1` Event. */
export function coreEventToEventsV1(obj: Json): Json {
  return renamed(
    obj,
    EVENTS_V1_TO_CORE.map(([a, b]) => [b, a] as const),
  );
}
