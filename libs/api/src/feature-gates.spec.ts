import { FeatureGateError, FeatureGates } from './feature-gates';

describe('FeatureGates', () => {
  it.each([
    { name: 'defaults', spec: '', gate: 'WatchList', want: false },
    { name: 'enable alpha', spec: 'WatchList=true', gate: 'WatchList', want: true },
    { name: 'disable beta', spec: 'APIResponseCompression=false', gate: 'APIResponseCompression', want: false },
    { name: 'GA stays on', spec: 'ServerSideApply=true', gate: 'ServerSideApply', want: true },
  ])('$name', ({ spec, gate, want }) => {
    expect(new FeatureGates(spec).enabled(gate)).toBe(want);
  });

  it.each([
    { name: 'unknown gate', spec: 'NoSuchGate=true', err: /unrecognized feature gate: NoSuchGate/ },
    { name: 'disabling a GA gate', spec: 'DryRun=false', err: /cannot set feature gate DryRun to false, feature is locked to true/ },
    { name: 'not a bool', spec: 'WatchList=yes', err: /must be true or false/ },
    { name: 'no value', spec: 'WatchList', err: /missing bool value/ },
  ])('start-up error: $name', ({ spec, err }) => {
    expect(() => new FeatureGates(spec)).toThrow(FeatureGateError);
    expect(() => new FeatureGates(spec)).toThrow(err);
  });

  it('warns when a GA gate is set', () => {
    expect(new FeatureGates('ServerSideApply=true').warnings[0]).toMatch(/Setting GA feature gate ServerSideApply=true/);
  });
});
