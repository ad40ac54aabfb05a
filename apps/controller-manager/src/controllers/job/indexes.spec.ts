import type { Pod } from '../../framework/api';
import { completionIndexOf, countIndexes, firstPendingIndexes, formatIndexes, parseIndexes, withIndexes } from './indexes';

const pod = (index?: string, label?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', annotations: index === undefined ? undefined : { 'batch.orch.io/job-completion-index': index }, labels: label === undefined ? undefined : { 'batch.orch.io/job-completion-index': label } },
  spec: { containers: [] },
});

describe('completed indexes', () => {
  it.each([
    { text: '', completions: 5, want: '' },
    { text: '0,1,2', completions: 5, want: '0-2' },
    { text: '3-4,0', completions: 5, want: '0,3-4' },
    { text: '1-9', completions: 5, want: '1-4' },
    { text: 'x,2,-1,7', completions: 5, want: '2' },
  ])('parse $text (completions $completions) → $want', ({ text, completions, want }) => {
    expect(formatIndexes(parseIndexes(text, completions))).toBe(want);
  });

  it.each([
    { base: '', add: [2, 0, 1], want: '0-2', count: 3 },
    { base: '0-1', add: [3], want: '0-1,3', count: 3 },
    { base: '0-1,3', add: [2], want: '0-3', count: 4 },
  ])('$base + $add → $want', ({ base, add, want, count }) => {
    const merged = withIndexes(parseIndexes(base, 10), add);
    expect(formatIndexes(merged)).toBe(want);
    expect(countIndexes(merged)).toBe(count);
  });

  it.each([
    { name: 'annotation', pod: pod('3'), want: 3 },
    { name: 'label when no annotation', pod: pod(undefined, '4'), want: 4 },
    { name: 'invalid', pod: pod('x'), want: undefined },
    { name: 'none', pod: pod(), want: undefined },
  ])('completionIndexOf: $name', ({ pod: p, want }) => {
    expect(completionIndexOf(p)).toBe(want);
  });

  it.each([
    { name: 'lowest free indexes', active: ['1'], succeeded: '0', count: 2, completions: 5, want: [2, 3] },
    { name: 'bounded by completions', active: [], succeeded: '0-2', count: 5, completions: 4, want: [3] },
    { name: 'nothing left', active: ['1'], succeeded: '0', count: 3, completions: 2, want: [] },
  ])('firstPendingIndexes: $name', ({ active, succeeded, count, completions, want }) => {
    expect(firstPendingIndexes(active.map((i) => pod(i)), parseIndexes(succeeded, completions), count, completions)).toEqual(want);
  });
});
