import { canConvert, ConversionError, convertObject } from './conversion';
import { HPA_BEHAVIOR_ANNOTATION, HPA_CONDITIONS_ANNOTATION, HPA_CURRENT_METRICS_ANNOTATION, HPA_METRICS_ANNOTATION } from './conversions/autoscaling';

const meta = { name: 'x', namespace: 'default' };

describe('Event: events.orch.io/v1 ↔ core v1 (its storage form)', () => {
  const eventsV1 = {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: meta,
    eventTime: '2024-01-01T00:00:00.000000Z',
    series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' },
    reportingController: 'orch.io/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    reason: 'Scheduled',
    regarding: { kind: 'Pod', name: 'p', namespace: 'default', uid: 'u' },
    note: 'Successfully assigned default/p to n1',
    type: 'Normal',
  };
  const core = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: meta,
    eventTime: '2024-01-01T00:00:00.000000Z',
    series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z' },
    reportingComponent: 'orch.io/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    reason: 'Scheduled',
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default', uid: 'u' },
    message: 'Successfully assigned default/p to n1',
    type: 'Normal',
  };

  it('renames regarding/note/reportingController to the core names and back', () => {
    expect(convertObject(eventsV1, 'v1')).toEqual(core);
    expect(convertObject(core, 'events.orch.io/v1')).toEqual(eventsV1);
  });

  it.each([
    { name: 'source', core: { source: { component: 'kubelet', host: 'n1' } }, v1: { deprecatedSource: { component: 'kubelet', host: 'n1' } } },
    { name: 'timestamps and count', core: { firstTimestamp: '2024-01-01T00:00:00Z', lastTimestamp: '2024-01-01T00:01:00Z', count: 3 }, v1: { deprecatedFirstTimestamp: '2024-01-01T00:00:00Z', deprecatedLastTimestamp: '2024-01-01T00:01:00Z', deprecatedCount: 3 } },
  ])('the deprecated fields of old-style core events: $name', ({ core: c, v1 }) => {
    const oldStyle = { apiVersion: 'v1', kind: 'Event', metadata: meta, reason: 'Pulled', ...c };
    expect(convertObject(oldStyle, 'events.orch.io/v1')).toEqual({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: meta, reason: 'Pulled', ...v1 });
  });

  it('does not modify its input', () => {
    const input = structuredClone(eventsV1);
    convertObject(input, 'v1');
    expect(input).toEqual(eventsV1);
  });
});

describe('HorizontalPodAutoscaler: autoscaling/v1 ↔ autoscaling/v2 (its storage form)', () => {
  const ref = { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' };
  const cpu = (n: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: n } } });

  it.each([
    {
      name: 'kubectl autoscale: a CPU target',
      v1: { spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 60 } },
      v2: { spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, metrics: [cpu(60)] } },
    },
    {
      name: 'no target: 80% CPU, as upstream',
      v1: { spec: { scaleTargetRef: ref, maxReplicas: 5 } },
      v2: { spec: { scaleTargetRef: ref, maxReplicas: 5, metrics: [cpu(80)] } },
      // v1 → v2 only (the v2 form names the default explicitly).
      oneWay: true,
    },
    {
      name: 'status',
      v1: { spec: { scaleTargetRef: ref, maxReplicas: 5, targetCPUUtilizationPercentage: 50 }, status: { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 70, lastScaleTime: '2024-01-01T00:00:00Z' } },
      v2: {
        spec: { scaleTargetRef: ref, maxReplicas: 5, metrics: [cpu(50)] },
        status: { currentReplicas: 2, desiredReplicas: 3, lastScaleTime: '2024-01-01T00:00:00Z', currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 70 } } }] },
      },
      // v2 → v1 also keeps the current metric list in an annotation (tested below).
      oneWay: true,
    },
  ])('$name', ({ v1, v2, oneWay }) => {
    const asV1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: meta, ...v1 };
    const asV2 = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta, ...v2 };
    expect(convertObject(asV1, 'autoscaling/v2')).toEqual(asV2);
    if (!oneWay) expect(convertObject(asV2, 'autoscaling/v1')).toEqual(asV1);
  });

  it('v2 → v1 → v2 keeps what v1 cannot say in annotations, and removes them again', () => {
    const v2 = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { ...meta, annotations: { team: 'a' } },
      spec: {
        scaleTargetRef: ref,
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
          { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
          { type: 'External', external: { metric: { name: 'queue', selector: { matchLabels: { q: 'a' } } }, target: { type: 'Value', value: '30' } } },
          { type: 'Object', object: { describedObject: { kind: 'Service', name: 's', apiVersion: 'v1' }, metric: { name: 'rps' }, target: { type: 'Value', value: '100' } } },
          cpu(70),
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
      status: {
        currentReplicas: 3,
        desiredReplicas: 3,
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40, averageValue: '200m' } } }],
        conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale' }],
      },
    };
    const v1 = convertObject(v2, 'autoscaling/v1') as Record<string, any>;
    expect(v1.spec).toEqual({ scaleTargetRef: ref, minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 70 });
    expect(v1.status).toEqual({ currentReplicas: 3, desiredReplicas: 3, currentCPUUtilizationPercentage: 40 });
    expect(Object.keys(v1.metadata.annotations).sort()).toEqual([HPA_BEHAVIOR_ANNOTATION, HPA_CONDITIONS_ANNOTATION, HPA_CURRENT_METRICS_ANNOTATION, HPA_METRICS_ANNOTATION, 'team'].sort());
    // The metric list is in the v1 metric format.
    expect(JSON.parse(v1.metadata.annotations[HPA_METRICS_ANNOTATION])[0]).toEqual({ type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } });
    expect(convertObject(v1, 'autoscaling/v2')).toEqual(v2);
  });

  const service = { kind: 'Service', name: 's', apiVersion: 'v1' };
  it.each([
    {
      name: 'Object',
      spec: { type: 'Object', object: { describedObject: service, metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '5' } } },
      specV1: { type: 'Object', object: { target: service, metricName: 'rps', averageValue: '5' } },
      status: { type: 'Object', object: { describedObject: service, metric: { name: 'rps' }, current: { value: '90' } } },
      statusV1: { type: 'Object', object: { target: service, metricName: 'rps', currentValue: '90' } },
    },
    {
      name: 'Pods',
      spec: { type: 'Pods', pods: { metric: { name: 'qps', selector: { matchLabels: { a: 'b' } } }, target: { type: 'AverageValue', averageValue: '10' } } },
      specV1: { type: 'Pods', pods: { metricName: 'qps', selector: { matchLabels: { a: 'b' } }, targetAverageValue: '10' } },
      status: { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '9' } } },
      statusV1: { type: 'Pods', pods: { metricName: 'qps', currentAverageValue: '9' } },
    },
    {
      name: 'Resource',
      spec: { type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 60 } } },
      specV1: { type: 'Resource', resource: { name: 'memory', targetAverageUtilization: 60 } },
      status: { type: 'Resource', resource: { name: 'memory', current: { averageValue: '400Mi' } } },
      statusV1: { type: 'Resource', resource: { name: 'memory', currentAverageValue: '400Mi' } },
    },
    {
      name: 'ContainerResource',
      spec: { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'AverageValue', averageValue: '300m' } } },
      specV1: { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', targetAverageValue: '300m' } },
      status: { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', current: { averageUtilization: 45 } } },
      statusV1: { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', currentAverageUtilization: 45 } },
    },
    {
      name: 'External',
      spec: { type: 'External', external: { metric: { name: 'queue', selector: { matchLabels: { q: 'a' } } }, target: { type: 'AverageValue', averageValue: '3' } } },
      specV1: { type: 'External', external: { metricName: 'queue', metricSelector: { matchLabels: { q: 'a' } }, targetAverageValue: '3' } },
      status: { type: 'External', external: { metric: { name: 'queue' }, current: { value: '25' } } },
      statusV1: { type: 'External', external: { metricName: 'queue', currentValue: '25' } },
    },
  ])('a $name metric: the v1 metric format in the annotations, and back', ({ spec, specV1, status, statusV1 }) => {
    const v2 = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: meta,
      spec: { scaleTargetRef: ref, maxReplicas: 4, metrics: [spec, cpu(50)] },
      status: { currentReplicas: 1, desiredReplicas: 1, currentMetrics: [status] },
    };
    const v1 = convertObject(v2, 'autoscaling/v1') as Record<string, any>;
    expect(JSON.parse(v1.metadata.annotations[HPA_METRICS_ANNOTATION])).toEqual([specV1]);
    expect(JSON.parse(v1.metadata.annotations[HPA_CURRENT_METRICS_ANNOTATION])).toEqual([statusV1]);
    expect(convertObject(v1, 'autoscaling/v2')).toEqual(v2);
  });

  it('a malformed round-trip annotation is a ConversionError naming it', () => {
    const v1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { ...meta, annotations: { [HPA_METRICS_ANNOTATION]: '[' } }, spec: { scaleTargetRef: ref, maxReplicas: 2 } };
    expect(() => convertObject(v1, 'autoscaling/v2')).toThrow(ConversionError);
    expect(() => convertObject(v1, 'autoscaling/v2')).toThrow(HPA_METRICS_ANNOTATION);
  });
});

describe('convertObject', () => {
  it('returns an object already in the version as it is', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta };
    expect(convertObject(cm, 'v1')).toBe(cm);
  });

  it.each([
    { from: 'v1', kind: 'ConfigMap', to: 'apps/v1', want: false },
    { from: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', to: 'autoscaling/v2', want: true },
    { from: 'storage.orch.io/v1beta1', kind: 'CSIStorageCapacity', to: 'storage.orch.io/v1', want: true },
  ])('canConvert $from $kind → $to: $want', ({ from, kind, to, want }) => {
    expect(canConvert(from, kind, to)).toBe(want);
    if (!want) expect(() => convertObject({ apiVersion: from, kind }, to)).toThrow(ConversionError);
  });
});
