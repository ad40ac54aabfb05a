import type { CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionNames, ResourceDef } from '@orch/api';

/** The outcome of checking a CRD's names against every other name in its group. */
export interface NamingResult {
  /** The names to serve: the requested ones when free, else the ones accepted before. */
  acceptedNames: CustomResourceDefinitionNames;
  namesAccepted: Omit<CustomResourceDefinitionCondition, 'lastTransitionTime'>;
}

/** Names in use in a group: plurals, singulars, short names, kinds and list kinds. */
interface UsedNames {
  resources: Set<string>;
  kinds: Set<string>;
}

function usedNames(group: string, self: CustomResourceDefinition, others: readonly CustomResourceDefinition[], builtins: readonly ResourceDef[]): UsedNames {
  const used: UsedNames = { resources: new Set(), kinds: new Set() };
  for (const other of others) {
    if (other.metadata.uid === self.metadata.uid || other.metadata.name === self.metadata.name || other.spec?.group !== group) continue;
    const n = other.status?.acceptedNames;
    if (!n?.plural) continue;
    for (const r of [n.plural, n.singular, ...(n.shortNames ?? [])]) if (r) used.resources.add(r);
    for (const k of [n.kind, n.listKind]) if (k) used.kinds.add(k);
  }
  for (const def of builtins) {
    if (def.group !== group || def.custom) continue;
    for (const r of [def.resource, def.singular, ...def.shortNames]) used.resources.add(r);
    for (const k of [def.kind, def.listKind]) used.kinds.add(k);
  }
  return used;
}

/**
 * Upstream NamingConditionController: a CRD's plural, singular, short names, kind and list kind
 * must not be used by another CRD (or built-in resource) of the same group. Free names are
 * accepted (NamesAccepted True, NoConflicts); a conflict leaves the previously accepted names
 * and reports which name is taken (PluralConflict, SingularConflict, ShortNamesConflict,
 * KindConflict, ListKindConflict).
 */
export function checkNames(crd: CustomResourceDefinition, others: readonly CustomResourceDefinition[], builtins: readonly ResourceDef[]): NamingResult {
  const requested = crd.spec.names;
  const previous = crd.status?.acceptedNames ?? { plural: '', kind: '' };
  const used = usedNames(crd.spec.group, crd, others, builtins);
  const conflict = (reason: string, name: string): NamingResult => ({
    acceptedNames: previous,
    namesAccepted: { type: 'NamesAccepted', status: 'False', reason, message: `"${name}" is already in use` },
  });
  if (used.resources.has(requested.plural)) return conflict('PluralConflict', requested.plural);
  if (requested.singular && used.resources.has(requested.singular)) return conflict('SingularConflict', requested.singular);
  for (const s of requested.shortNames ?? []) if (used.resources.has(s)) return conflict('ShortNamesConflict', s);
  if (used.kinds.has(requested.kind)) return conflict('KindConflict', requested.kind);
  if (requested.listKind && used.kinds.has(requested.listKind)) return conflict('ListKindConflict', requested.listKind);
  return { acceptedNames: requested, namesAccepted: { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' } };
}
