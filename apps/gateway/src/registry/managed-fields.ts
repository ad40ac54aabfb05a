import type { ResourceDef } from '@orch/api';
import { objectSchemaOf } from '@orch/api';
import { FieldManager, FieldSet, fieldElement, type KubeObject } from '@orch/apimachinery';
import { nowTime } from './object-meta';
import type { RequestContext } from './strategy';

const STATUS = FieldSet.fromPaths([[fieldElement('status')]]);

/**
 * metadata.managedFields upkeep of one resource (SPEC "Apply ownership"): every write is
 * recorded for ctx.fieldManager, as an Update entry or, for server-side apply, an Apply
 * entry. Through the main resource of a kind with a status subresource, status is never
 * owned (the strategy resets it; upstream reset fields).
 */
export class ManagedFieldsTracker {
  private readonly fields: FieldManager;
  private readonly ignored: FieldSet | undefined;

  constructor(def: ResourceDef, apiVersion: string, hasStatusSubresource: boolean) {
    this.fields = new FieldManager(objectSchemaOf(def), apiVersion);
    this.ignored = hasStatusSubresource ? STATUS : undefined;
  }

  /**
   * Sets obj.metadata.managedFields for a non-apply write of `obj` over `old` (undefined for
   * a create). Call after the strategy prepared obj, so that ownership follows what is stored.
   */
  trackUpdate(old: KubeObject | undefined, obj: KubeObject, ctx: RequestContext, subresource: string): void {
    const ignored = subresource ? undefined : this.ignored;
    const managedFields = this.fields.update(old, obj, { manager: ctx.fieldManager ?? '', subresource, now: nowTime(), ignored });
    if (managedFields) obj.metadata.managedFields = managedFields;
    else delete obj.metadata.managedFields;
  }

  /** Server-side apply of `config` over `live` (undefined: create); the merged object, not yet defaulted. */
  apply(live: KubeObject | undefined, config: KubeObject, force: boolean, ctx: RequestContext): KubeObject {
    return this.fields.apply(live, config, { manager: ctx.fieldManager ?? '', now: nowTime(), force, ignored: this.ignored });
  }
}
