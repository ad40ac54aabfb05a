import { isJsonObject, itemsOf, valuesOf, type JSONSchemaProps } from './json-schema';

// Defaulting of custom resources from their structural schema (upstream apiextensions
// structural/defaulting): a specified property that is absent, or null where the schema does
// not allow null, gets a copy of its `default`; defaulted values are defaulted inside too.
// Nulls in non-nullable properties without a default are dropped. Runs on request bodies,
// after mutating admission, and on every read from storage (a default added to a CRD later
// shows on objects written before).

/** Applies the schema's defaults to `value` in place. */
export function applySchemaDefaults(value: unknown, s: JSONSchemaProps | undefined): void {
  if (!s) return;
  if (isJsonObject(value)) {
    if (s.properties) {
      for (const [k, prop] of Object.entries(s.properties)) {
        const present = Object.hasOwn(value, k);
        const v = value[k];
        if (v === null && !prop.nullable) {
          if (prop.default !== undefined) value[k] = structuredClone(prop.default);
          else delete value[k];
        } else if (!present && prop.default !== undefined) {
          value[k] = structuredClone(prop.default);
        }
      }
    }
    const values = valuesOf(s);
    for (const [k, v] of Object.entries(value)) {
      const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : values;
      if (prop && v !== null && typeof v === 'object') applySchemaDefaults(v, prop);
    }
    return;
  }
  if (Array.isArray(value)) {
    const items = itemsOf(s);
    if (!items) return;
    for (const v of value) if (v !== null && typeof v === 'object') applySchemaDefaults(v, items);
  }
}

/** Whether any node of the schema declares a default (reads then need defaulting). */
export function schemaHasDefaults(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false;
  if (s.default !== undefined) return true;
  if (s.properties && Object.values(s.properties).some(schemaHasDefaults)) return true;
  return schemaHasDefaults(itemsOf(s)) || schemaHasDefaults(valuesOf(s));
}
