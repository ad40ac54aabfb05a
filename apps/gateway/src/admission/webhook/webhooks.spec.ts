import { deniedByWebhook, dryRunRefusal } from './webhooks';

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
});
