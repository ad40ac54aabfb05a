/** Stage of a feature gate (SPEC "Feature gate life cycle"). */
export type GateStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface GateSpec {
  stage: GateStage;
  default: boolean;
  /** GA gates are locked to their default: setting the opposite fails start-up. */
  lockToDefault: boolean;
}

/** The gates named by SPEC, with upstream 1.32 stages. */
export const KNOWN_FEATURE_GATES: Record<string, GateSpec> = {
  APIResponseCompression: { stage: 'BETA', default: true, lockToDefault: false },
  APIListChunking: { stage: 'GA', default: true, lockToDefault: true },
  RemainingItemCount: { stage: 'GA', default: true, lockToDefault: true },
  WatchBookmark: { stage: 'GA', default: true, lockToDefault: true },
  ServerSideApply: { stage: 'GA', default: true, lockToDefault: true },
  ServerSideFieldValidation: { stage: 'GA', default: true, lockToDefault: true },
  DryRun: { stage: 'GA', default: true, lockToDefault: true },
  RemoveSelfLink: { stage: 'GA', default: true, lockToDefault: true },
  WatchList: { stage: 'ALPHA', default: false, lockToDefault: false },
  StructuredAuthenticationConfiguration: { stage: 'BETA', default: true, lockToDefault: false },
  ServiceIPStaticSubrange: { stage: 'BETA', default: true, lockToDefault: false },
  ProxyTerminatingEndpoints: { stage: 'GA', default: true, lockToDefault: true },
  ConsistentListFromCache: { stage: 'BETA', default: true, lockToDefault: false },
  /** MutatingAdmissionPolicy (admissionregistration v1alpha1): also needs the group version enabled by --runtime-config. */
  MutatingAdmissionPolicy: { stage: 'ALPHA', default: false, lockToDefault: false },
};

export class FeatureGateError extends Error {}

/**
 * Feature gates of one component, from `--feature-gates=A=true,B=false`.
 * Unknown gates and changing a locked (GA) gate are start-up errors; setting a
 * GA or deprecated gate yields a warning (SPEC Deprecation 10).
 */
export class FeatureGates {
  private readonly values = new Map<string, boolean>();
  readonly warnings: string[] = [];

  constructor(
    spec?: string,
    private readonly known: Record<string, GateSpec> = KNOWN_FEATURE_GATES,
  ) {
    for (const item of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      const eq = item.indexOf('=');
      if (eq < 0) throw new FeatureGateError(`missing bool value for feature gate ${JSON.stringify(item)}`);
      const name = item.slice(0, eq).trim();
      const raw = item.slice(eq + 1).trim().toLowerCase();
      const gate = this.known[name];
      if (!gate) throw new FeatureGateError(`unrecognized feature gate: ${name}`);
      if (raw !== 'true' && raw !== 'false') throw new FeatureGateError(`invalid value of ${name}=${raw}, err: must be true or false`);
      const value = raw === 'true';
      if (gate.lockToDefault && value !== gate.default) {
        throw new FeatureGateError(`cannot set feature gate ${name} to ${value}, feature is locked to ${gate.default}`);
      }
      if (gate.stage === 'GA' || gate.stage === 'DEPRECATED') {
        this.warnings.push(`Setting ${gate.stage} feature gate ${name}=${value}. It will be removed in a future release.`);
      }
      this.values.set(name, value);
    }
  }

  enabled(name: string): boolean {
    const gate = this.known[name];
    if (!gate) throw new FeatureGateError(`feature gate ${name} is not registered`);
    return this.values.get(name) ?? gate.default;
  }

  /** `name=value` for every known gate, for `--help` and logs. */
  describe(): string[] {
    return Object.entries(this.known).map(([n, g]) => `${n}=${this.enabled(n)} (${g.stage}${g.lockToDefault ? ', locked' : ''})`);
  }
}
