import type { KubeObject } from '@orch/apimachinery';
import { generateJobSelector, jobStrategy, validateJobSelector } from './jobs';

const job = (spec: Record<string, unknown>): KubeObject & { spec: any } => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'pi', namespace: 'default', uid: 'uid-1' }, spec });
const ctx = { user: { username: 'u', groups: [] }, namespace: 'default', dryRun: false, warnings: [] };

describe('Job strategy', () => {
  it.each([
    {
      name: 'generated selector and template labels (orch form and legacy)',
      twins: false,
      want: { 'controller-uid': 'uid-1', 'job-name': 'pi', 'batch.orch.io/controller-uid': 'uid-1', 'batch.orch.io/job-name': 'pi', app: 'pi' },
    },
    {
      name: 'with the batch.kubernetes.io twins under the compatibility option',
      twins: true,
      want: {
        'controller-uid': 'uid-1',
        'job-name': 'pi',
        'batch.orch.io/controller-uid': 'uid-1',
        'batch.orch.io/job-name': 'pi',
        'batch.kubernetes.io/controller-uid': 'uid-1',
        'batch.kubernetes.io/job-name': 'pi',
        app: 'pi',
      },
    },
  ])('$name', ({ twins, want }) => {
    const j = job({ template: { metadata: { labels: { app: 'pi' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
    jobStrategy(twins).prepareForCreate!(j, ctx);
    expect(j.spec.selector).toEqual({ matchLabels: { 'batch.orch.io/controller-uid': 'uid-1' } });
    expect(j.spec.template.metadata.labels).toEqual(want);
    expect(jobStrategy(twins).validate!(j, ctx)).toEqual([]);
  });

  it('keeps a manual selector as it is', () => {
    const j = job({ manualSelector: true, selector: { matchLabels: { app: 'pi' } }, template: { metadata: { labels: { app: 'pi' } } } });
    jobStrategy(true).prepareForCreate!(j, ctx);
    expect(j.spec.selector).toEqual({ matchLabels: { app: 'pi' } });
    expect(j.spec.template.metadata.labels).toEqual({ app: 'pi' });
  });

  it('a user label that conflicts with the generated one fails validation', () => {
    const j = job({ template: { metadata: { labels: { 'batch.orch.io/controller-uid': 'other' } } } });
    generateJobSelector(j, false);
    expect(validateJobSelector(j).map((e) => e.toString())).toEqual([
      expect.stringContaining('spec.template.metadata.labels: Invalid value'),
    ]);
  });

  it.each([
    { name: 'missing selector', spec: { manualSelector: true, template: {} }, want: 'spec.selector: Required value' },
    { name: 'selector not matching the template', spec: { manualSelector: true, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'c' } } } }, want: '`selector` does not match template `labels`' },
  ])('validation: $name', ({ spec, want }) => {
    expect(validateJobSelector(job(spec)).map((e) => e.toString()).join('; ')).toContain(want);
  });
});

describe('Job validation', () => {
  it.each([
    { name: 'no spec', spec: undefined },
    { name: 'no template', spec: {} },
    { name: 'a template without containers', spec: { template: { spec: { containers: [] } } } },
  ])('$name: spec.template.spec.containers is required', ({ spec }) => {
    const j = { ...job({}), spec } as KubeObject & { spec: any };
    jobStrategy(false).prepareForCreate!(j, ctx);
    expect(jobStrategy(false).validate!(j, ctx).map((e) => `${e.field}: ${e.type}`)).toContain('spec.template.spec.containers: FieldValueRequired');
  });
});
