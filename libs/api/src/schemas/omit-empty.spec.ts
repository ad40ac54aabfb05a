import { omitEmptyFields } from './omit-empty';

// Go's JSON encoding of the same object, as `kubectl get -o json` shows it from upstream.
describe('omitEmptyFields', () => {
  const pod = (container: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'i', ...container }], ...spec },
  });

  it.each([
    { name: 'omitempty false, 0 and "" go (stdin, tty, terminationMessagePath)', gvk: ['', 'v1', 'Pod'], obj: pod({ stdin: false, tty: false, terminationMessagePath: '' }), want: pod({}) },
    { name: 'omitempty true and non-empty values stay', gvk: ['', 'v1', 'Pod'], obj: pod({ stdin: true, workingDir: '/w' }), want: pod({ stdin: true, workingDir: '/w' }) },
    { name: 'an omitempty empty list and map go (args, labels), null too', gvk: ['', 'v1', 'Pod'], obj: { ...pod({ args: [], env: null }), metadata: { name: 'p', labels: {} } }, want: pod({}) },
    { name: 'a required list stays empty (containers: [])', gvk: ['', 'v1', 'Pod'], obj: { kind: 'Pod', spec: { containers: [] } }, want: { kind: 'Pod', spec: { containers: [] } } },
    { name: "a pointer's zero value stays (enableServiceLinks: false)", gvk: ['', 'v1', 'Pod'], obj: pod({}, { enableServiceLinks: false }), want: pod({}, { enableServiceLinks: false }) },
    { name: 'structs are never empty (status: {})', gvk: ['', 'v1', 'Pod'], obj: { ...pod({}), status: {} }, want: { ...pod({}), status: {} } },
    { name: 'unknown fields are left alone', gvk: ['', 'v1', 'Pod'], obj: pod({ extra: false }), want: pod({ extra: false }) },
    {
      name: 'nested templates: a Deployment keeps replicas: 0 and loses paused: false, minReadySeconds: 0 and the container zeros',
      gvk: ['apps', 'v1', 'Deployment'],
      obj: { kind: 'Deployment', metadata: { generation: 0 }, spec: { replicas: 0, paused: false, minReadySeconds: 0, template: { spec: { containers: [{ name: 'c', stdin: false }] } } } },
      want: { kind: 'Deployment', metadata: {}, spec: { replicas: 0, template: { spec: { containers: [{ name: 'c' }] } } } },
    },
    {
      name: 'PersistentVolumeClaim storageClassName "" (no class, a pointer) stays; PersistentVolume\'s goes',
      gvk: ['', 'v1', 'PersistentVolumeClaim'],
      obj: { kind: 'PersistentVolumeClaim', spec: { storageClassName: '' } },
      want: { kind: 'PersistentVolumeClaim', spec: { storageClassName: '' } },
    },
    { name: "PersistentVolume storageClassName '' goes", gvk: ['', 'v1', 'PersistentVolume'], obj: { kind: 'PersistentVolume', spec: { storageClassName: '' } }, want: { kind: 'PersistentVolume', spec: {} } },
    {
      name: 'a field without omitempty keeps false (SubjectAccessReview status.allowed)',
      gvk: ['authorization.k8s.io', 'v1', 'SubjectAccessReview'],
      obj: { kind: 'SubjectAccessReview', spec: {}, status: { allowed: false, denied: false } },
      want: { kind: 'SubjectAccessReview', spec: {}, status: { allowed: false } },
    },
    {
      name: 'map values are visited (ConfigMap data keeps "" values: a map of strings, not fields)',
      gvk: ['', 'v1', 'ConfigMap'],
      obj: { kind: 'ConfigMap', data: { a: '' }, binaryData: {} },
      want: { kind: 'ConfigMap', data: { a: '' } },
    },
  ])('$name', ({ gvk: [group, version, kind], obj, want }) => {
    omitEmptyFields(obj as Record<string, unknown>, group, version, kind);
    expect(obj).toEqual(want);
  });

  it('throws for a kind without a schema', () => {
    expect(() => omitEmptyFields({}, 'example.com', 'v1', 'Widget')).toThrow('no schema for kind Widget in example.com/v1');
  });
});
