import { makePod } from '../../framework/testing';
import { PodInfo, type QueuedPodInfo } from '../../framework/types';
import { PrioritySort } from './priority-sort';

const queued = (priority: number, timestamp: number): QueuedPodInfo => ({
  podInfo: new PodInfo(makePod(`p${priority}-${timestamp}`, { priority })),
  timestamp,
  attempts: 0,
  unschedulablePlugins: new Set(),
});

describe('PrioritySort', () => {
  it.each([
    { name: 'higher priority first', a: queued(10, 5), b: queued(1, 1), want: true },
    { name: 'lower priority later', a: queued(1, 1), b: queued(10, 5), want: false },
    { name: 'same priority: earlier first', a: queued(5, 1), b: queued(5, 2), want: true },
    { name: 'same priority: later second', a: queued(5, 2), b: queued(5, 1), want: false },
    { name: 'equal is not less', a: queued(5, 1), b: queued(5, 1), want: false },
    { name: 'negative priorities', a: queued(-1, 9), b: queued(-5, 1), want: true },
  ])('$name', ({ a, b, want }) => {
    expect(new PrioritySort().less(a, b)).toBe(want);
  });
});
