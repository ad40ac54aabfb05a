import { decideDependent, type ClassifiedRef, type OwnerState } from './decide';

const ref = (uid: string, state: OwnerState): ClassifiedRef => ({ ref: { apiVersion: 'v1', kind: 'ConfigMap', name: uid, uid }, state });

describe('decideDependent (attemptToDeleteItem)', () => {
  it.each([
    { name: 'a solid owner keeps it', refs: [ref('a', 'solid')], deps: false, cycle: false, finalizers: [], want: { action: 'keep' } },
    { name: 'solid + dangling: drop the dangling reference', refs: [ref('a', 'solid'), ref('b', 'dangling')], deps: false, cycle: false, finalizers: [], want: { action: 'removeOwnerRefs', uids: ['b'] } },
    { name: 'solid + waiting: drop the waiting reference', refs: [ref('a', 'solid'), ref('w', 'waiting')], deps: false, cycle: false, finalizers: [], want: { action: 'removeOwnerRefs', uids: ['w'] } },
    { name: 'all owners gone: background', refs: [ref('a', 'dangling')], deps: true, cycle: false, finalizers: [], want: { action: 'delete', policy: 'Background' } },
    { name: 'all gone, orphan finalizer kept', refs: [ref('a', 'dangling')], deps: false, cycle: false, finalizers: ['orphan'], want: { action: 'delete', policy: 'Orphan' } },
    { name: 'all gone, foreground finalizer kept', refs: [ref('a', 'dangling')], deps: false, cycle: false, finalizers: ['foregroundDeletion'], want: { action: 'delete', policy: 'Foreground' } },
    { name: 'owner waits and it has dependents: foreground', refs: [ref('w', 'waiting')], deps: true, cycle: false, finalizers: [], want: { action: 'deleteForeground', unblock: false } },
    { name: 'a cycle: unblock first', refs: [ref('w', 'waiting')], deps: true, cycle: true, finalizers: [], want: { action: 'deleteForeground', unblock: true } },
    { name: 'owner waits, no dependents: background', refs: [ref('w', 'waiting')], deps: false, cycle: false, finalizers: [], want: { action: 'delete', policy: 'Background' } },
  ])('$name', ({ refs, deps, cycle, finalizers, want }) => {
    expect(decideDependent(refs, deps, cycle, finalizers)).toEqual(want);
  });
});
