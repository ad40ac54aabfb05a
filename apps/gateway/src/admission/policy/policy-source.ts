// What validating and mutating admission policies share: their policies and bindings from the
// replica's caches (compiled once per policy generation), the index of bindings that apply to
// a resource, selectors, parameter objects, and the expression values of one request.

import { parseApiVersion, type ResourceDef } from '@orch/api';
import { BoundedMap, StatusError, type KubeObject, type LabelSelectorObject } from '@orch/apimachinery';
import { CelCompileError, project, type CelProgram } from '@orch/cel';
import type { AdmissionAttributes } from '../../pipeline/admit';
import { admissionActivation, ALL_READS, convertedActivation, readsOfPrograms, type ActivationReads, type AdmissionActivation } from '../admission-request';
import type { AdmissionState } from '../admission-state';
import { matchingResource, namespaceSelectorMatches, objectSelectorMatches, selectorMatches, type MatchedAs, type RuleTarget } from '../matching';
import { findNamespace } from '../namespace-annotations';
import { policyEnv } from './policy-env';
import type { MatchResources } from './policy-types';

/** An expression compiled once per policy generation, or the reason it does not compile. */
export interface Compiled {
  expression: string;
  program?: CelProgram;
  error?: string;
}

export function compileExpression(expression: string, resultTypes?: string[]): Compiled {
  try {
    return { expression, program: policyEnv().compile(expression, resultTypes ? { resultTypes } : {}) };
  } catch (e) {
    return { expression, error: e instanceof CelCompileError ? e.message : String(e) };
  }
}

/** The fields validating and mutating policies have in common. */
export interface PolicyObject extends KubeObject {
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string };
    matchConstraints?: MatchResources;
    failurePolicy?: 'Fail' | 'Ignore';
    matchConditions?: { name: string; expression: string }[];
    variables?: { name: string; expression: string }[];
  };
}

export interface BindingObject extends KubeObject {
  spec?: {
    policyName?: string;
    paramRef?: { name?: string; namespace?: string; selector?: LabelSelectorObject; parameterNotFoundAction?: 'Allow' | 'Deny' };
    matchResources?: MatchResources;
  };
}

/** A policy compiled for evaluation: what every kind of policy has, plus its own expressions (`T`). */
export interface CompiledPolicy<P extends PolicyObject> {
  policy: P;
  paramResource?: ResourceDef;
  matchConditions: (Compiled & { name: string })[];
  variables: (Compiled & { name: string })[];
}

/** A binding whose policy's (and its own) rules cover the request's resource and operation. */
export interface Candidate<P extends PolicyObject, B extends BindingObject, C extends CompiledPolicy<P>> {
  compiled: C;
  binding: B;
  /** The resource and kind the policy's rules matched the request as (matchPolicy Equivalent). */
  matched: MatchedAs;
  /** Rules name resources (resourceNames): matched again per request, by name. */
  byName: boolean;
  /** Selectors left to check per request. */
  selectors: { objectSelector?: LabelSelectorObject; namespaceSelector?: LabelSelectorObject }[];
  /** Whether the policy's expressions cannot overrun their cost limits on any object of the matched kind (see withinLimits; decided on first use). */
  withinLimits?: boolean;
  /** The last answer of withinLimits for objects no larger than a size cap (requests in a row usually have one cap). */
  withinCap?: { cap: number; within: boolean };
}

const INDEX_LIMIT = 512;
/** The `variables` of the activation of a policy without variables (nothing is written to it; it has no keys to read). */
const NO_VARIABLES: Readonly<Record<string, unknown>> = Object.freeze(Object.create(null) as Record<string, unknown>);
/** The parameter objects of a policy without paramKind: one evaluation, params null. */
const NO_PARAMS: readonly null[] = [null];

/** What decides which bindings' rules cover a request (the index's key, with whether the request names a namespace). */
interface RuleLookup {
  operation: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  inNamespace: boolean;
  namespaced: boolean;
}
/** The smallest size cap of PolicyRequest.sizeCap: below it, estimates are too small to matter. */
const SMALLEST_SIZE_CAP = 64;

/**
 * The policies and bindings of one policy kind, as this replica's caches have them. Policies
 * are compiled once per resourceVersion; the bindings that apply to an (operation, resource,
 * subresource, scope) are found once per generation of either cache and kept in an index, so
 * a request pays only for the selectors of its candidates.
 */
export class PolicySource<P extends PolicyObject, B extends BindingObject, C extends CompiledPolicy<P>> {
  private compiled = new Map<string, C>();
  /** The generations of the policies' and the bindings' caches and of the catalog the compiled policies and the index are of. */
  private generations: readonly [number, number, number] = [-1, -1, -1];
  private readonly index = new BoundedMap<string, Candidate<P, B, C>[]>(INDEX_LIMIT);
  /** The index's answer to the last request (requests in a row are often for one resource): compared field by field, no key made. */
  private last?: RuleLookup & { found: Candidate<P, B, C>[]; byName: boolean };
  private readonly reads = new WeakMap<Candidate<P, B, C>[], ActivationReads>();

  constructor(
    private readonly state: AdmissionState,
    private readonly group: string,
    private readonly policies: string,
    private readonly bindings: string,
    private readonly compile: (policy: P, shared: CompiledPolicy<P>) => C,
  ) {}

  /** The shared part of a compiled policy (param resource, matchConditions, variables). */
  compileShared(policy: P): CompiledPolicy<P> {
    const spec = policy.spec ?? {};
    return {
      policy,
      paramResource: this.paramResourceOf(policy),
      matchConditions: (spec.matchConditions ?? []).map((c) => ({ name: c.name, ...compileExpression(c.expression, ['bool']) })),
      variables: (spec.variables ?? []).map((v) => ({ name: v.name, ...compileExpression(v.expression) })),
    };
  }

  /** The bindings whose rules cover the request, in binding name order. */
  candidates(a: AdmissionAttributes): Candidate<P, B, C>[] {
    this.refresh();
    const r = a.resource;
    let last = this.last;
    if (!last || last.operation !== a.operation || last.group !== r.group || last.version !== r.version || last.resource !== r.resource || last.subresource !== a.subresource || last.inNamespace !== !!a.namespace) {
      const def = this.state.catalog.lookup(r.group, r.version, r.resource);
      const namespaced = def ? def.scope === 'Namespaced' : !!a.namespace;
      const key = `${a.operation}|${r.group}|${r.version}|${r.resource}|${a.subresource}|${namespaced}`;
      const found = this.index.get(key, () => this.match(a, namespaced, true));
      this.last = last = { operation: a.operation, group: r.group, version: r.version, resource: r.resource, subresource: a.subresource, inNamespace: !!a.namespace, namespaced, found, byName: found.some((c) => c.byName) };
    }
    if (!last.byName) return last.found;
    const byName = this.match(a, last.namespaced, false);
    return last.found.filter((c) => !c.byName || byName.some((n) => n.binding === c.binding));
  }

  /**
   * What the expressions of the candidates' policies (`expressions` lists a compiled policy's)
   * read of the request's values, the same value for the same candidates (see ActivationReads).
   */
  readsOf(candidates: Candidate<P, B, C>[], expressions: (c: C) => (Compiled | undefined)[]): ActivationReads {
    let reads = this.reads.get(candidates);
    if (!reads) {
      reads = readsOfPrograms(candidates.flatMap((c) => expressions(c.compiled).flatMap((e) => (e?.program ? [e.program] : []))));
      this.reads.set(candidates, reads);
    }
    return reads;
  }

  /** Whether the candidate's selectors select the request (the namespace read only when a selector needs it). */
  async selects(c: Candidate<P, B, C>, a: AdmissionAttributes): Promise<boolean> {
    for (const s of c.selectors) {
      if (!objectSelectorMatches(s.objectSelector, a)) return false;
      if (s.namespaceSelector && !namespaceSelectorMatches(s.namespaceSelector, a, a.namespace ? await findNamespace(this.state, a.namespace) : undefined)) return false;
    }
    return true;
  }

  /**
   * The parameter objects of a binding (`[null]`: the policy takes none; `[]`: none found and
   * the binding allows that). A missing one under `Deny` is a denial (`deny` of the request, the
   * candidate and the message: no closure per call); a policy whose paramKind is not served, or
   * a binding without paramRef, an evaluation error.
   */
  params(c: Candidate<P, B, C>, a: AdmissionAttributes, deny: (a: AdmissionAttributes, c: Candidate<P, B, C>, message: string) => StatusError): readonly (KubeObject | null)[] {
    const cp = c.compiled;
    if (!cp.policy.spec?.paramKind) return NO_PARAMS;
    const ref = c.binding.spec?.paramRef;
    if (!cp.paramResource) throw new Error(`failed to find resource referenced by paramKind: '${cp.policy.spec.paramKind.apiVersion}, Kind=${cp.policy.spec.paramKind.kind}'`);
    if (!ref) throw new Error('the binding has no paramRef but the policy has a paramKind');
    const cache = this.state.cache(cp.paramResource.group, cp.paramResource.resource);
    const namespaced = cp.paramResource.scope === 'Namespaced';
    const ns = namespaced ? (ref.namespace ?? a.namespace) : '';
    let found: KubeObject[];
    if (ref.name) {
      const one = cache.get(ns, ref.name);
      found = one ? [one] : [];
    } else found = cache.list(namespaced ? ns : undefined).filter((o) => selectorMatches(ref.selector ?? {}, o.metadata.labels));
    if (found.length === 0) {
      if ((ref.parameterNotFoundAction ?? 'Deny') === 'Allow') return [];
      throw deny(a, c, 'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction');
    }
    return found;
  }

  /** The served resource of a policy's paramKind, as the catalog has it now. */
  private paramResourceOf(policy: P): ResourceDef | undefined {
    const pk = policy.spec?.paramKind;
    const gv = pk?.apiVersion ? parseApiVersion(pk.apiVersion) : undefined;
    return gv && pk?.kind ? this.state.catalog.lookupKind(gv.group, gv.version, pk.kind) : undefined;
  }

  /** Compiles what changed and empties the index after a change of the policies, the bindings or the catalog (a resource served or no longer served changes matches and paramKinds). */
  private refresh(): void {
    const policies = this.state.cache<P>(this.group, this.policies);
    const bindings = this.state.cache<B>(this.group, this.bindings);
    const catalog = this.state.catalog.generation;
    const [p0, b0, c0] = this.generations;
    if (policies.generation === p0 && bindings.generation === b0 && catalog === c0) return;
    this.generations = [policies.generation, bindings.generation, catalog];
    this.index.clear();
    this.last = undefined;
    const next = new Map<string, C>();
    for (const p of policies.list()) {
      const name = p.metadata.name ?? '';
      const old = this.compiled.get(name);
      const current = old && old.policy.metadata.resourceVersion === p.metadata.resourceVersion && (catalog === c0 || old.paramResource === this.paramResourceOf(p));
      next.set(name, current ? old : this.compile(p, this.compileShared(p)));
    }
    this.compiled = next;
  }

  /** The candidates among all bindings (`byRules`: leaving resourceNames out, for the index; else by name too). */
  private match(a: AdmissionAttributes, namespaced: boolean, byRules: boolean): Candidate<P, B, C>[] {
    const name = (b: B) => b.metadata.name ?? '';
    const bindings = this.state
      .cache<B>(this.group, this.bindings)
      .list()
      .sort((x, y) => (name(x) < name(y) ? -1 : name(x) > name(y) ? 1 : 0));
    const target = { operation: a.operation, resource: a.resource, kind: a.kind, subresource: a.subresource, namespaced, name: a.name };
    const named = (m: MatchResources | undefined) => [...(m?.resourceRules ?? []), ...(m?.excludeResourceRules ?? [])].some((r) => r.resourceNames?.length);
    const out: Candidate<P, B, C>[] = [];
    for (const binding of bindings) {
      const compiled = this.compiled.get(binding.spec?.policyName ?? '');
      const constraints = compiled?.policy.spec?.matchConstraints;
      if (!compiled || !constraints) continue;
      const own = binding.spec?.matchResources;
      const matched = this.rulesMatch(constraints, target, true, byRules);
      if (!matched) continue;
      if (own && !this.rulesMatch(own, target, false, byRules)) continue;
      out.push({ compiled, binding, matched, byName: named(constraints) || named(own), selectors: [constraints, own ?? {}].filter((m) => m.objectSelector || m.namespaceSelector) });
    }
    return out;
  }

  /**
   * Whether match resources' rules select the request, and as which resource and kind. A
   * policy's must name the resource in its resourceRules; a binding's may leave them out (then
   * it narrows only by selectors and exclusions). `byRules` decides without the request's
   * name: rules naming resources include any name and exclusions naming resources exclude
   * none (a superset, narrowed per request).
   */
  private rulesMatch(m: MatchResources, target: RuleTarget, rulesRequired: boolean, byRules: boolean): MatchedAs | undefined {
    const policy = m.matchPolicy ?? 'Equivalent';
    const include = byRules ? (m.resourceRules ?? []).map((r) => (r.resourceNames?.length ? { ...r, resourceNames: undefined } : r)) : (m.resourceRules ?? []);
    const matched = rulesRequired || include.length ? matchingResource(include, target, policy, this.state.catalog) : { resource: target.resource, kind: target.kind };
    if (!matched) return undefined;
    const exclude = byRules ? (m.excludeResourceRules ?? []).filter((r) => !r.resourceNames?.length) : (m.excludeResourceRules ?? []);
    if (exclude.length && matchingResource(exclude, target, policy, this.state.catalog)) return undefined;
    return matched;
  }
}

/**
 * The expression values of one request for policies: the request's own (shared with
 * webhooks) plus `namespaceObject`, converted once and shared by every policy the request
 * meets; `params` and `variables` are per binding. `reads`: what those policies' expressions
 * read of these values (only that is converted; a value none reads is null). Call `load` once
 * before `activation`.
 */
export class PolicyRequest {
  private namespaceObject: unknown = null;
  /** The activation of bindings without params or variables, per versioned request (all such bindings share it; usually one: the request's own version). */
  private readonly plain: { versioned: AdmissionAttributes; activation: Record<string, unknown> }[] = [];

  constructor(
    private readonly state: AdmissionState,
    readonly attributes: AdmissionAttributes,
    private readonly reads: ActivationReads = ALL_READS,
  ) {}

  /** The request's values each activation was made of, per versioned request (usually one: the request's own version). */
  private readonly bases: { versioned: AdmissionAttributes; base: AdmissionActivation }[] = [];

  /**
   * A size cap no size in the activation's `object` and `oldObject` (as converted: what the
   * expressions can read) is above (see CelValueConverter.largestSize): a power of two, at
   * least SMALLEST_SIZE_CAP, so that few distinct caps occur.
   */
  sizeCap(activation: Record<string, unknown>): number {
    const last = this.lastSizeCap;
    if (last?.activation === activation) return last.cap;
    let cap = Infinity;
    for (const { base } of this.bases) if (base.object === activation.object && base.oldObject === activation.oldObject) cap = 2 ** Math.ceil(Math.log2(Math.max(SMALLEST_SIZE_CAP, base.largestSize)));
    this.lastSizeCap = { activation, cap };
    return cap;
  }

  /** The last sizeCap answer (the policies of a request usually share one activation). */
  private lastSizeCap?: { activation: Record<string, unknown>; cap: number };

  /** Reads the request's namespace (from the replica's cache unless it is missing there), when an expression reads it: a promise only then. */
  load(): void | Promise<void> {
    const a = this.attributes;
    const p = this.reads.namespaceObject;
    if (a.namespace && p) return findNamespace(this.state, a.namespace).then((ns) => void (this.namespaceObject = policyEnv().toCel(project(ns, p))));
  }

  /** The activation for one binding (versioned: the request as the policy matched it); `variables` receives the policy's variables (`hasVariables`: it has some). */
  activation(versioned: AdmissionAttributes, param: KubeObject | null, hasVariables: boolean): Record<string, unknown> {
    const shareable = param === null && !hasVariables;
    if (shareable) {
      for (const p of this.plain) if (p.versioned === versioned) return p.activation;
    }
    const env = policyEnv();
    const p = this.reads.params;
    const base = this.base(versioned);
    // A literal, not a spread: a spread's copy is slow in a request's cold CPU caches (bench admission-micro --flush).
    const act = { object: base.object, oldObject: base.oldObject, request: base.request, authorizer: base.authorizer, params: param && p ? env.toCel(project(param, p)) : null, namespaceObject: this.namespaceObject, variables: hasVariables ? (Object.create(null) as Record<string, unknown>) : NO_VARIABLES };
    if (shareable) this.plain.push({ versioned, activation: act });
    return act;
  }

  /**
   * The request's values as `versioned`, converted once per PolicyRequest: those of all reads
   * are shared with the request's other hooks (admissionActivation); a projection is this
   * request's policies' own, so nothing else would find them there.
   */
  private base(versioned: AdmissionAttributes): AdmissionActivation {
    for (const b of this.bases) if (b.versioned === versioned) return b.base;
    const base = this.reads === ALL_READS ? admissionActivation(policyEnv(), versioned, this.state.authorizer) : convertedActivation(policyEnv(), versioned, this.state.authorizer, this.reads);
    this.bases.push({ versioned, base });
    return base;
  }
}
