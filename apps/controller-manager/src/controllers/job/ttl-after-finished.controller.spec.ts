import type { Job } from '../../framework/api';
import { ttlExpiry } from './ttl-after-finished.controller';

const job = (ttl: number | undefined, condition?: { type: string; status: 'True' | 'False'; at: string }): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j' },
  spec: { ttlSecondsAfterFinished: ttl, template: { spec: { containers: [] } } },
  status: condition ? { conditions: [{ type: condition.type, status: condition.status, lastTransitionTime: condition.at }] } : {},
});

describe('ttlExpiry', () => {
  it.each([
    { name: 'complete + ttl', job: job(60, { type: 'Complete', status: 'True', at: '2024-01-01T00:00:00Z' }), want: Date.parse('2024-01-01T00:01:00Z') },
    { name: 'failed + ttl 0', job: job(0, { type: 'Failed', status: 'True', at: '2024-01-01T00:00:00Z' }), want: Date.parse('2024-01-01T00:00:00Z') },
    { name: 'no ttl', job: job(undefined, { type: 'Complete', status: 'True', at: '2024-01-01T00:00:00Z' }), want: undefined },
    { name: 'not finished', job: job(60, { type: 'SuccessCriteriaMet', status: 'True', at: '2024-01-01T00:00:00Z' }), want: undefined },
  ])('$name', ({ job: j, want }) => {
    expect(ttlExpiry(j)).toBe(want);
  });
});
