import { ControllerExpectations, CreateExpectations, EXPECTATIONS_TIMEOUT_MS, UIDTrackingExpectations } from './expectations';

describe('ControllerExpectations', () => {
  it.each([
    { name: 'no record is satisfied', steps: [], want: true },
    { name: 'pending creations are not', steps: ['create 2', 'created'], want: false },
    { name: 'all creations observed', steps: ['create 2', 'created', 'created'], want: true },
    { name: 'pending deletions are not', steps: ['delete 1'], want: false },
    { name: 'deletion observed', steps: ['delete 1', 'deleted'], want: true },
    { name: 'a new expectation replaces the old one', steps: ['create 1', 'delete 2', 'created', 'deleted'], want: false },
    { name: 'forgotten key', steps: ['create 3', 'forget'], want: true },
    { name: 'expired after the timeout', steps: ['create 1', 'wait'], want: true },
  ])('$name', ({ steps, want }) => {
    let now = 0;
    const e = new ControllerExpectations(() => now);
    for (const step of steps) {
      const [op, n] = step.split(' ');
      if (op === 'create') e.expectCreations('k', Number(n));
      else if (op === 'delete') e.expectDeletions('k', Number(n));
      else if (op === 'created') e.creationObserved('k');
      else if (op === 'deleted') e.deletionObserved('k');
      else if (op === 'forget') e.delete('k');
      else if (op === 'wait') now += EXPECTATIONS_TIMEOUT_MS + 1;
    }
    expect(e.satisfied('k')).toBe(want);
  });
});

describe('UIDTrackingExpectations', () => {
  it.each([
    { name: 'each expected pod counts once', observed: ['ns/a', 'ns/a'], want: { add: 0, del: 1 } },
    { name: 'unexpected pods do not count', observed: ['ns/c'], want: { add: 0, del: 2 } },
    { name: 'both observed', observed: ['ns/a', 'ns/b'], want: { add: 0, del: 0 } },
  ])('$name', ({ observed, want }) => {
    const e = new UIDTrackingExpectations();
    e.expectDeletionsOf('rs', ['ns/a', 'ns/b']);
    for (const pod of observed) e.deletionObservedOf('rs', pod);
    expect(e.pending('rs')).toEqual(want);
  });
});

describe('CreateExpectations', () => {
  it.each([
    { name: 'no record is satisfied', steps: [], want: true },
    { name: 'a pending create is not', steps: ['expect a'], want: false },
    { name: 'observed', steps: ['expect a', 'observe a'], want: true },
    { name: 'one of two observed', steps: ['expect a', 'expect b', 'observe a'], want: false },
    { name: 'forgotten owner', steps: ['expect a', 'forget'], want: true },
    { name: 'still pending just before the shared timeout', steps: ['expect a', 'wait -1'], want: false },
    { name: 'expired after the shared timeout', steps: ['expect a', 'wait 1'], want: true },
  ])('$name', ({ steps, want }) => {
    let now = 0;
    const e = new CreateExpectations(() => now);
    for (const step of steps) {
      const [op, arg] = step.split(' ');
      if (op === 'expect') e.expect('owner', arg);
      else if (op === 'observe') e.observe('owner', arg);
      else if (op === 'forget') e.forget('owner');
      else if (op === 'wait') now += EXPECTATIONS_TIMEOUT_MS + Number(arg);
    }
    expect(e.satisfied('owner')).toBe(want);
  });
});
