import { randomUUID } from 'node:crypto';
import type { CustomResourceInfo, ResourceDef } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { ObjectConverter } from '../registry/generic-store';
import { WebhookError, type WebhookClient } from '../webhooks/webhook-client';

/** Upstream's conversion webhook timeout. */
const CONVERSION_TIMEOUT_MS = 30_000;

interface ConversionReviewResponse {
  uid?: string;
  convertedObjects?: KubeObject[];
  result?: { status?: string; message?: string };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Conversion between the versions of a custom resource (upstream apiextensions crConverter):
 * `None` changes only apiVersion; `Webhook` sends the objects that need it in one
 * ConversionReview v1 and checks the answer (same uid, Success, one object per object in the
 * desired apiVersion and kind; metadata other than labels and annotations stays as it was).
 * The review is sent as `apiextensions.k8s.io/v1` when `k8sNames` (what stock webhook servers
 * decode), else `apiextensions.orch.io/v1`. A failed webhook is a 500 naming the CRD.
 */
export class CustomResourceConverter implements ObjectConverter {
  constructor(
    private readonly def: ResourceDef,
    private readonly custom: CustomResourceInfo,
    private readonly webhooks: WebhookClient,
    private readonly k8sNames: boolean,
  ) {}

  /** None conversion only (a webhook is never called synchronously). */
  get convertSync(): ((object: KubeObject, toApiVersion: string) => KubeObject) | undefined {
    if (this.custom.conversion.strategy === 'Webhook') return undefined;
    return (object, toApiVersion) => ({ ...object, apiVersion: toApiVersion });
  }

  async convert(objects: KubeObject[], toApiVersion: string): Promise<KubeObject[]> {
    const todo = objects.map((o, i) => ({ o, i })).filter(({ o }) => o.apiVersion !== toApiVersion);
    if (todo.length === 0) return objects;
    const prefix = `${this.def.group}/`;
    const version = toApiVersion.startsWith(prefix) ? toApiVersion.slice(prefix.length) : '';
    if (!this.custom.versions.includes(version)) throw this.failed(toApiVersion, `${toApiVersion} is not a version of ${this.custom.crdName}`);
    const out = [...objects];
    if (this.custom.conversion.strategy !== 'Webhook') {
      for (const { o, i } of todo) out[i] = { ...o, apiVersion: toApiVersion };
      return out;
    }
    const converted = await this.review(
      todo.map((t) => t.o),
      toApiVersion,
    );
    todo.forEach(({ o, i }, k) => (out[i] = this.checked(o, converted[k], toApiVersion)));
    return out;
  }

  private async review(objects: KubeObject[], toApiVersion: string): Promise<KubeObject[]> {
    const webhook = this.custom.conversion.webhook;
    if (!webhook?.clientConfig) throw this.failed(toApiVersion, 'the CRD has no conversion webhook configured');
    const uid = randomUUID();
    const review = {
      apiVersion: `apiextensions.${this.k8sNames ? 'k8s' : 'orch'}.io/v1`,
      kind: 'ConversionReview',
      request: { uid, desiredAPIVersion: toApiVersion, objects },
    };
    let answer: unknown;
    try {
      answer = await this.webhooks.post(webhook.clientConfig, review, CONVERSION_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof WebhookError || err instanceof StatusError) throw this.failed(toApiVersion, err.message);
      throw err;
    }
    const raw = isObject(answer) ? answer.response : undefined;
    if (!isObject(raw)) throw this.failed(toApiVersion, 'conversion webhook response was absent');
    const response = raw as ConversionReviewResponse;
    if (response.uid !== uid) throw this.failed(toApiVersion, `expected response uid ${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? '')}`);
    if (response.result?.status !== 'Success') throw this.failed(toApiVersion, `conversion webhook returned failure: ${response.result?.message ?? '(no message)'}`);
    const converted = response.convertedObjects;
    if (!Array.isArray(converted) || converted.length !== objects.length) {
      throw this.failed(toApiVersion, `expected ${objects.length} converted objects, got ${Array.isArray(converted) ? converted.length : 0}`);
    }
    return converted;
  }

  /** A converted object as upstream accepts it: right apiVersion and kind, identity metadata restored. */
  private checked(original: KubeObject, converted: KubeObject, toApiVersion: string): KubeObject {
    if (!isObject(converted)) throw this.failed(toApiVersion, 'a converted object is not an object');
    if (converted.apiVersion !== toApiVersion) throw this.failed(toApiVersion, `invalid converted object apiVersion: expected ${toApiVersion}, got ${String(converted.apiVersion)}`);
    if (converted.kind !== original.kind) throw this.failed(toApiVersion, `invalid converted object kind: expected ${original.kind}, got ${String(converted.kind)}`);
    const meta = isObject(converted.metadata) ? converted.metadata : {};
    if ((meta.name ?? original.metadata.name) !== original.metadata.name || (meta.uid ?? original.metadata.uid) !== original.metadata.uid) {
      throw this.failed(toApiVersion, 'the conversion webhook must not change metadata other than labels and annotations');
    }
    const metadata = { ...original.metadata };
    if (isObject(meta.labels)) metadata.labels = meta.labels as Record<string, string>;
    else delete metadata.labels;
    if (isObject(meta.annotations)) metadata.annotations = meta.annotations as Record<string, string>;
    else delete metadata.annotations;
    return { ...converted, metadata };
  }

  private failed(toApiVersion: string, why: string): StatusError {
    return StatusError.internal(`conversion webhook for ${this.def.group}/${this.def.version}, Kind=${this.def.kind} failed: ${why} (to ${toApiVersion})`);
  }
}
