import { Catalog } from '@orch/api';
import { monitoredResources } from './garbagecollector.controller';

describe('monitoredResources', () => {
  const monitored = new Map(monitoredResources(new Catalog()).map((d) => [`${d.group}/${d.resource}`, d.version]));
  it.each([
    { resource: '/pods', want: 'v1' },
    { resource: 'apps/replicasets', want: 'v1' },
    { resource: 'batch/jobs', want: 'v1' },
    { resource: '/configmaps', want: 'v1' },
    { resource: 'autoscaling/horizontalpodautoscalers', want: 'v2' },
    { resource: '/events', want: undefined },
    { resource: 'events.orch.io/events', want: undefined },
    { resource: 'authorization.orch.io/subjectaccessreviews', want: undefined },
  ])('$resource → $want', ({ resource, want }) => {
    expect(monitored.get(resource)).toBe(want);
  });
});
