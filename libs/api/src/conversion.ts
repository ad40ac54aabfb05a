import { groupVersionString } from './catalog';
import type { GroupVersionKind } from './catalog-types';
import { convertHpaV1ToV2, convertHpaV2ToV1 } from './conversions/autoscaling';
import { coreEventToEventsV1, eventsV1ToCoreEvent } from './conversions/events';

type Json = Record<string, unknown>;

/** An object cannot be converted between the two versions (no conversion is declared). */
export class ConversionError extends Error {
  override name = 'ConversionError';
}

/** Converts the JSON form of an object of one version to another (returns a new object; the input is not modified). */
export type Converter = (obj: Json) => Json;

interface Conversion {
  from: GroupVersionKind;
  to: GroupVersionKind;
  convert: Converter;
}

/** A conversion that only renames the apiVersion (the two versions have the same fields). */
const sameFields: Converter = (obj) => structuredClone(obj);

/**
 * Every conversion between served versions of one kind (upstream conversion functions):
 * resources that share storage ({@link ResourceDef.storage}) are converted to the storage
 * version on write and back on read. Both directions are listed.
 */
const CONVERSIONS: Conversion[] = [
  // core v1 Event is the storage form of events.orch.io/v1 Event (upstream stores both as core events).
  { from: { group: 'events.orch.io', version: 'v1', kind: 'Event' }, to: { group: '', version: 'v1', kind: 'Event' }, convert: eventsV1ToCoreEvent },
  { from: { group: '', version: 'v1', kind: 'Event' }, to: { group: 'events.orch.io', version: 'v1', kind: 'Event' }, convert: coreEventToEventsV1 },
  // autoscaling/v2 is the storage form of autoscaling/v1 HorizontalPodAutoscaler.
  { from: { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' }, to: { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' }, convert: convertHpaV1ToV2 },
  { from: { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' }, to: { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' }, convert: convertHpaV2ToV1 },
  // storage.orch.io/v1beta1 CSIStorageCapacity has the fields of v1 (SPEC Versioning: "none" changed).
  { from: { group: 'storage.orch.io', version: 'v1beta1', kind: 'CSIStorageCapacity' }, to: { group: 'storage.orch.io', version: 'v1', kind: 'CSIStorageCapacity' }, convert: sameFields },
  { from: { group: 'storage.orch.io', version: 'v1', kind: 'CSIStorageCapacity' }, to: { group: 'storage.orch.io', version: 'v1beta1', kind: 'CSIStorageCapacity' }, convert: sameFields },
];

const BY_KEY = new Map(CONVERSIONS.map((c) => [key(groupVersionString(c.from), c.from.kind, groupVersionString(c.to)), c.convert]));

function key(fromApiVersion: string, kind: string, toApiVersion: string): string {
  return `${fromApiVersion}:${kind}->${toApiVersion}`;
}

/** True when objects of `kind` convert from one apiVersion to the other. */
export function canConvert(fromApiVersion: string, kind: string, toApiVersion: string): boolean {
  return fromApiVersion === toApiVersion || BY_KEY.has(key(fromApiVersion, kind, toApiVersion));
}

/**
 * The object in `toApiVersion` (same kind). An object already in that version is returned as
 * it is; otherwise a converted copy with apiVersion set. Throws ConversionError when no
 * conversion is declared or the object cannot be converted (a malformed round-trip annotation).
 */
export function convertObject<T extends { apiVersion?: string; kind?: string }>(obj: T, toApiVersion: string): T {
  const from = obj.apiVersion ?? '';
  if (from === toApiVersion) return obj;
  const convert = BY_KEY.get(key(from, obj.kind ?? '', toApiVersion));
  if (!convert) throw new ConversionError(`no conversion of ${obj.kind ?? 'an object'} from ${from || '(no apiVersion)'} to ${toApiVersion}`);
  let out: Json;
  try {
    out = convert(obj as unknown as Json);
  } catch (err) {
    throw new ConversionError(`${obj.kind} cannot be converted from ${from} to ${toApiVersion}: ${(err as Error).message}`);
  }
  return { ...out, apiVersion: toApiVersion, kind: obj.kind } as unknown as T;
}
