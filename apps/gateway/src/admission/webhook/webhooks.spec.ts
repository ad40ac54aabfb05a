import { deniedByWebhook, dryRunRefusal, reviewResponse, reviewVersion } from './webhooks';

describe('webhook answers', () => {
  it.each([
    { name: 'message and code', status: { code: 403, message: 'no thanks', reason: 'Forbidden' }, want: [403, 'admission webhook "w.example.com" denied the request: no thanks'] },
    { name: 'reason only', status: { reason: 'NotAllowed' }, want: [400, 'admission webhook "w.example.com" denied the request: NotAllowed'] },
    { name: 'nothing', status: undefined, want: [400, 'admission webhook "w.example.com" denied the request without explanation'] },
    { name: 'a success code is made a failure', status: { code: 200, message: 'x' }, want: [400, 'admission webhook "w.example.com" denied the request: x'] },
  ])('denial: $name', ({ status, want }) => {
    const err = deniedByWebhook('w.example.com', status);
    expect([err.code, err.message]).toEqual(want);
  });

  it.each([
    { sideEffects: 'None', dryRun: true, refused: false },
    { sideEffects: 'NoneOnDryRun', dryRun: true, refused: false },
    { sideEffects: 'Some', dryRun: true, refused: true },
    { sideEffects: 'Unknown', dryRun: true, refused: true },
    { sideEffects: undefined, dryRun: true, refused: true },
    { sideEffects: 'Some', dryRun: false, refused: false },
  ])('dry run with sideEffects $sideEffects (dryRun=$dryRun): refused=$refused', ({ sideEffects, dryRun, refused }) => {
    const err = dryRunRefusal({ name: 'w.example.com', sideEffects }, dryRun);
    expect(err?.code).toBe(refused ? 400 : undefined);
    if (refused) expect(err?.message).toBe('admission webhook "w.example.com" has side effects and does not support dry run');
  });

  it.each([
    { versions: ['v1', 'v1beta1'], want: 'v1' },
    { versions: ['v1beta1', 'v1'], want: 'v1beta1' },
    { versions: ['v2', 'v1beta1'], want: 'v1beta1' },
    { versions: ['v2'], want: undefined },
    { versions: undefined, want: undefined },
  ])('admissionReviewVersions $versions: sent $want', ({ versions, want }) => {
    expect(reviewVersion({ admissionReviewVersions: versions })).toBe(want);
  });

  const v1 = (response: unknown, apiVersion = 'admission.k8s.io/v1') => ({ apiVersion, kind: 'AdmissionReview', response });
  it.each([
    { name: 'v1 answer', version: 'v1', answer: v1({ uid: 'u', allowed: true }), error: undefined },
    { name: 'v1 without response', version: 'v1', answer: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, error: 'webhook response was absent' },
    { name: 'v1 for another uid', version: 'v1', answer: v1({ uid: 'x', allowed: true }), error: 'expected response.uid="u", got "x"' },
    { name: 'v1 answered as v1beta1', version: 'v1', answer: v1({ uid: 'u', allowed: true }, 'admission.k8s.io/v1beta1'), error: 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview' },
    { name: 'v1 patch without patchType', version: 'v1', answer: v1({ uid: 'u', allowed: true, patch: 'W10=' }), error: 'webhook returned response.patch but not response.patchType JSONPatch (undefined)' },
    { name: 'v1beta1 answer without uid or kind', version: 'v1beta1', answer: { response: { allowed: true } }, error: undefined },
    { name: 'v1beta1 without response', version: 'v1beta1', answer: {}, error: 'webhook response was absent' },
  ])('answer check: $name', ({ version, answer, error }) => {
    if (error) expect(() => reviewResponse(version, 'u', answer)).toThrow(error);
    else expect(reviewResponse(version, 'u', answer)).toEqual(answer.response);
  });
});
