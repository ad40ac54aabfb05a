import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { applyJsonPatch, StatusError, type KubeObject, type LabelSelectorObject, type StatusReason } from '@orch/apimachinery';
import { CelCompileError, type CelEnvironment, type CelProgram } from '@orch/cel';
import { AdmissionPluginProvider, ReinvocationContext, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResponse } from '../../pipeline/admit';
import { admissionActivation, admissionEnvironment, admissionRequest, type VersionedAttributes } from '../admission-request';
import { StateAdmissionPlugin, type AdmissionState } from '../admission-state';
import { matchingResource, namespaceSelectorMatches, objectSelectorMatches, type Rule } from '../matching';
import { findNamespace } from '../namespace-annotations';
import { WebhookError, type WebhookClientConfig } from '../../webhooks/webhook-client';

export const MUTATING_ADMISSION_WEBHOOK = 'MutatingAdmissionWebhook';
export const VALIDATING_ADMISSION_WEBHOOK = 'ValidatingAdmissionWebhook';

/** admissionregistration.orch.io/v1 MutatingWebhook / ValidatingWebhook. */
export interface Webhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: Rule[];
  failurePolicy?: 'Fail' | 'Ignore';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  matchConditions?: { name: string; expression: string }[];
}

interface WebhookConfiguration extends KubeObject {
  webhooks?: Webhook[];
}

/** A configured webhook, compiled: its matchConditions as programs (or the reason they do not compile). */
interface PreparedWebhook {
  configuration: string;
  hook: Webhook;
  conditions: { name: string; program?: CelProgram; error?: string }[];
}

interface AdmissionReviewResponse {
  uid?: string;
  allowed?: boolean;
  status?: { code?: number; message?: string; reason?: string };
  patch?: string;
  patchType?: string;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

const DEFAULT_TIMEOUT_SECONDS = 10;

/** The AdmissionReview versions this gateway sends, preferred first. */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/**
 * The AdmissionReview version a webhook is sent: the first of its admissionReviewVersions the
 * gateway speaks (upstream); undefined when it lists none.
 */
export function reviewVersion(hook: Pick<Webhook, 'admissionReviewVersions'>): string | undefined {
  return (hook.admissionReviewVersions ?? []).find((v) => REVIEW_VERSIONS.includes(v));
}

/**
 * The response of a webhook's answer, checked as upstream's VerifyAdmissionResponse: a v1
 * answer must be an admission.k8s.io/v1 AdmissionReview answering this uid; v1beta1 answers
 * were never checked for either, and still are not.
 */
export function reviewResponse(version: string, uid: string, answer: unknown): AdmissionReviewResponse {
  const review = (answer ?? {}) as { apiVersion?: unknown; kind?: unknown; response?: AdmissionReviewResponse };
  const response = review.response;
  if (!response || typeof response !== 'object') throw new WebhookError('webhook response was absent');
  if (version === 'v1') {
    if (response.uid !== uid) throw new WebhookError(`expected response.uid="${uid}", got "${response.uid}"`);
    if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
      throw new WebhookError(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${String(review.apiVersion)}, Kind=${String(review.kind)}`);
    }
  }
  if (response.patch && response.patchType !== 'JSONPatch') throw new WebhookError(`webhook returned response.patch but not response.patchType JSONPatch (${JSON.stringify(response.patchType)})`);
  return response;
}

/** upstream webhookerrors.ToStatusErr: the webhook's own status, worded as a denial. */
export function deniedByWebhook(name: string, status: AdmissionReviewResponse['status']): StatusError {
  const deniedBy = `admission webhook "${name}" denied the request`;
  const code = status?.code && status.code >= 400 ? status.code : 400;
  const message = status?.message ? `${deniedBy}: ${status.message}` : status?.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
  return new StatusError(code, (status?.reason as StatusReason | undefined) ?? ('' as StatusReason), message);
}

/** A call that failed under failurePolicy Fail (upstream: 500 InternalError "failed calling webhook"). */
function failedCalling(name: string, why: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: failed calling webhook "${name}": ${why}`, { causes: [{ message: `failed calling webhook "${name}": ${why}` }] });
}

/**
 * The webhooks of the stored Mutating- or ValidatingWebhookConfigurations, kept compiled as the
 * replica's cache of the configurations changes (a new webhook applies within the watch delay,
 * on every replica), and the call of one webhook for one request.
 */
class WebhookDispatcher {
  private prepared: PreparedWebhook[] = [];
  private generation = -1;
  private readonly env: CelEnvironment = admissionEnvironment();

  constructor(
    private readonly state: AdmissionState,
    readonly resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations',
  ) {}

  /** Compiled webhooks in upstream's order: configurations by name, webhooks as listed. */
  webhooks(): PreparedWebhook[] {
    const cache = this.state.cache<WebhookConfiguration>('admissionregistration.orch.io', this.resource);
    if (cache.generation !== this.generation) {
      this.generation = cache.generation;
      const configs = [...cache.list()].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
      this.prepared = configs.flatMap((c) => (c.webhooks ?? []).map((hook) => this.prepare(c.metadata.name ?? '', hook)));
    }
    return this.prepared;
  }

  private prepare(configuration: string, hook: Webhook): PreparedWebhook {
    return {
      configuration,
      hook,
      conditions: (hook.matchConditions ?? []).map((c) => {
        try {
          return { name: c.name, program: this.env.compile(c.expression, { resultTypes: ['bool'] }) };
        } catch (e) {
          return { name: c.name, error: e instanceof CelCompileError ? e.message : String(e) };
        }
      }),
    };
  }

  /**
   * The request as the webhook sees it when the webhook applies to it (rules with matchPolicy,
   * selectors, then matchConditions): under matchPolicy Equivalent its objects are converted
   * to the version the rules named, and matchConditions see that version. A matchCondition that
   * fails to evaluate is a call failure (failurePolicy decides); a conversion that fails is a
   * 500 whatever the failurePolicy (upstream).
   */
  async matches(w: PreparedWebhook, a: AdmissionAttributes): Promise<VersionedAttributes | undefined> {
    const def = this.state.catalog.lookup(a.resource.group, a.resource.version, a.resource.resource);
    const target = { operation: a.operation, resource: a.resource, kind: a.kind, subresource: a.subresource, namespaced: def ? def.scope === 'Namespaced' : !!a.namespace, name: a.name };
    const matched = matchingResource(w.hook.rules ?? [], target, w.hook.matchPolicy ?? 'Equivalent', this.state.catalog);
    if (!matched) return undefined;
    if (!objectSelectorMatches(w.hook.objectSelector, a)) return undefined;
    if (w.hook.namespaceSelector && !namespaceSelectorMatches(w.hook.namespaceSelector, a, a.namespace ? await findNamespace(this.state, a.namespace) : undefined)) return undefined;
    const versioned = await this.state.versioned(a, matched);
    for (const c of w.conditions) {
      if (c.error) throw new WebhookError(`compilation failed for matchCondition ${JSON.stringify(c.name)}: ${c.error}`);
      try {
        const r = await c.program!.evaluateAsync({ ...admissionActivation(this.env, versioned, this.state.authorizer) });
        if (r.value !== true) return undefined;
      } catch (e) {
        throw new WebhookError(`matchCondition ${JSON.stringify(c.name)} evaluation failed: ${(e as Error).message}`);
      }
    }
    return versioned;
  }

  /**
   * Calls the webhook with an AdmissionReview in the first version it accepts; returns its
   * response (checked) or throws WebhookError.
   */
  async call(w: PreparedWebhook, a: VersionedAttributes): Promise<AdmissionReviewResponse> {
    const version = reviewVersion(w.hook);
    if (!version) throw new WebhookError(`webhook does not accept known AdmissionReview versions (${REVIEW_VERSIONS.join(', ')})`);
    const uid = randomUUID();
    const review = { apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request: admissionRequest(a, uid) };
    let answer: unknown;
    try {
      answer = await this.state.webhooks.post(w.hook.clientConfig, review, (w.hook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000);
    } catch (e) {
      // An unresolvable Service (no endpoints, 503) is a call failure too.
      if (e instanceof StatusError) throw new WebhookError(e.message);
      throw e;
    }
    return reviewResponse(version, uid, answer);
  }
}

/**
 * SPEC Errors 2: a dry-run request meeting a webhook whose sideEffects are neither None nor
 * NoneOnDryRun fails (400); such configurations can only come from before v1, which validates
 * sideEffects on write.
 */
export function dryRunRefusal(hook: Pick<Webhook, 'name' | 'sideEffects'>, dryRun: boolean): StatusError | undefined {
  if (!dryRun || hook.sideEffects === 'None' || hook.sideEffects === 'NoneOnDryRun') return undefined;
  return StatusError.badRequest(`admission webhook "${hook.name}" has side effects and does not support dry run`);
}

/** A call of a webhook: its answer (absent when the call failed under failurePolicy Ignore) and the request as it saw it. */
interface Invocation {
  response?: AdmissionReviewResponse;
  attributes: VersionedAttributes;
}

/** Runs one webhook for a request; undefined when it does not apply (or its matchConditions failed under failurePolicy Ignore). */
async function invoke(d: WebhookDispatcher, w: PreparedWebhook, a: AdmissionAttributes): Promise<Invocation | undefined> {
  const ignore = (w.hook.failurePolicy ?? 'Fail') === 'Ignore';
  const fail = (why: string) => {
    if (ignore) return undefined;
    throw failedCalling(w.hook.name, why);
  };
  let attributes: VersionedAttributes | undefined;
  try {
    attributes = await d.matches(w, a);
  } catch (e) {
    if (e instanceof WebhookError) return fail(e.message);
    throw e;
  }
  if (!attributes) return undefined;
  const dryRun = dryRunRefusal(w.hook, a.dryRun);
  if (dryRun) throw dryRun;
  try {
    return { response: await d.call(w, attributes), attributes };
  } catch (e) {
    if (e instanceof WebhookError) return fail(`failed to call webhook: ${e.message}`) ?? { attributes };
    throw e;
  }
}

function collect(res: AdmissionReviewResponse, into: AdmissionResponse, w: PreparedWebhook): void {
  if (res.warnings?.length) (into.warnings ??= []).push(...res.warnings);
  if (res.auditAnnotations) {
    into.auditAnnotations ??= {};
    for (const [k, v] of Object.entries(res.auditAnnotations)) into.auditAnnotations[`${w.hook.name}/${k}`] = v;
  }
}

/**
 * The base of the two webhook plugins: the webhooks of the `configurations` resource, and
 * `handles` true only while some webhook is configured (none: the plugin is skipped).
 */
function webhookAdmissionPlugin(configurations: WebhookDispatcher['resource']) {
  return class WebhookAdmissionPlugin extends StateAdmissionPlugin {
    protected readonly dispatcher = new WebhookDispatcher(this.state, configurations);

    handles(): boolean {
      return this.dispatcher.webhooks().length > 0;
    }
  };
}

/**
 * MutatingAdmissionWebhook (upstream plugin of the same name): calls, in order, every webhook of
 * the MutatingWebhookConfigurations that applies to the request; a webhook may refuse the
 * request or change the object with a JSONPatch (applied to the object in the version the
 * webhook matched, then converted back). A change has the whole mutating chain run once more
 * (ReinvocationContext): built-in plugins again, and webhooks with reinvocationPolicy IfNeeded
 * that ran before a change.
 */
@AdmissionPluginProvider()
@Injectable()
export class MutatingAdmissionWebhook extends webhookAdmissionPlugin('mutatingwebhookconfigurations') implements AdmissionPlugin {
  readonly name = MUTATING_ADMISSION_WEBHOOK;

  /**
   * First pass: every applicable webhook in order. When one changes the object, the chain runs
   * again (built-in plugins too); in that second pass only the IfNeeded webhooks called before
   * a change are called again, and all IfNeeded webhooks called so far when the built-in
   * plugins changed the object since the last webhook (upstream webhookReinvokeContext).
   */
  async mutate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    const hooks = this.dispatcher.webhooks();
    const reinvocation = a.reinvocation ?? new ReinvocationContext();
    const state = reinvocation.value(this.name, () => ({ lastOutput: undefined as string | undefined, invokedIfNeeded: new Set<string>(), reinvoke: new Set<string>() }));
    /** A change: every IfNeeded webhook called so far is to be called again. */
    const requireReinvokingInvoked = () => {
      for (const k of state.invokedIfNeeded) state.reinvoke.add(k);
      state.invokedIfNeeded.clear();
    };
    if (reinvocation.isReinvoke && state.lastOutput !== JSON.stringify(a.object)) requireReinvokingInvoked();
    const out: AdmissionResponse = {};
    try {
      for (const w of hooks) {
        const key = `${w.configuration}/${w.hook.name}`;
        if (reinvocation.isReinvoke && !state.reinvoke.has(key)) continue;
        const invocation = await invoke(this.dispatcher, w, a);
        if (!invocation) continue;
        if (invocation.response && (await this.apply(w, invocation.response, invocation.attributes, a, out))) {
          reinvocation.shouldReinvoke = true;
          requireReinvokingInvoked();
        }
        if (w.hook.reinvocationPolicy === 'IfNeeded') state.invokedIfNeeded.add(key);
      }
    } finally {
      state.lastOutput = JSON.stringify(a.object);
    }
    return out;
  }

  /** A webhook's answer: a refusal, or its patch applied to the request's object. Returns whether the object changed. */
  private async apply(w: PreparedWebhook, res: AdmissionReviewResponse, attributes: VersionedAttributes, a: AdmissionAttributes, out: AdmissionResponse): Promise<boolean> {
    collect(res, out, w);
    if (!res.allowed) throw deniedByWebhook(w.hook.name, res.status);
    const seen = attributes.object;
    if (!res.patch || !seen || !a.object) return false;
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(res.patch, 'base64').toString('utf8'));
    } catch {
      throw failedCalling(w.hook.name, 'the patch is not valid JSON');
    }
    let patched: KubeObject;
    try {
      patched = applyJsonPatch(structuredClone(seen), ops) as KubeObject;
    } catch (e) {
      throw failedCalling(w.hook.name, `the patch does not apply: ${(e as Error).message}`);
    }
    if (JSON.stringify(patched) === JSON.stringify(seen)) return false;
    // In place, in the request's version: the chain and the registry hold this object.
    await this.state.applyVersioned(a, patched);
    return true;
  }
}

/**
 * ValidatingAdmissionWebhook (upstream plugin of the same name): calls every webhook of the
 * ValidatingWebhookConfigurations that applies to the request, in parallel; any refusal
 * refuses the request.
 */
@AdmissionPluginProvider()
@Injectable()
export class ValidatingAdmissionWebhook extends webhookAdmissionPlugin('validatingwebhookconfigurations') implements AdmissionPlugin {
  readonly name = VALIDATING_ADMISSION_WEBHOOK;

  async validate(a: AdmissionAttributes): Promise<AdmissionResponse | void> {
    const out: AdmissionResponse = {};
    const results = await Promise.allSettled(this.dispatcher.webhooks().map((w) => invoke(this.dispatcher, w, a).then((inv) => ({ w, res: inv?.response }))));
    for (const r of results) if (r.status === 'rejected') throw r.reason;
    for (const r of results) {
      const { w, res } = (r as PromiseFulfilledResult<{ w: PreparedWebhook; res?: AdmissionReviewResponse }>).value;
      if (!res) continue;
      collect(res, out, w);
      if (!res.allowed) throw deniedByWebhook(w.hook.name, res.status);
    }
    return out;
  }
}
