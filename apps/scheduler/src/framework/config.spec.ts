import { inTreeRegistry } from '../plugins/registry';
import { ConfigError, mergePluginSet, parseSchedulerConfiguration, type PluginSet } from './config';

const header = 'apiVersion: orch.io/v1\nkind: SchedulerConfiguration\n';

function errorsOf(text: string): string[] {
  try {
    parseSchedulerConfiguration(text, inTreeRegistry);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.errors.map((x) => x.toString());
    throw e;
  }
}

describe('parseSchedulerConfiguration', () => {
  it('applies defaults', () => {
    expect(parseSchedulerConfiguration(header, inTreeRegistry)).toEqual({
      apiVersion: 'orch.io/v1',
      kind: 'SchedulerConfiguration',
      percentageOfNodesToScore: 0,
      podInitialBackoffSeconds: 1,
      podMaxBackoffSeconds: 10,
      profiles: [{ schedulerName: 'default-scheduler' }],
    });
  });

  it('reads profiles, plugin sets and args', () => {
    const cfg = parseSchedulerConfiguration(
      `${header}percentageOfNodesToScore: 20
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packer
  plugins:
    score:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit, weight: 5}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
`,
      inTreeRegistry,
    );
    expect(cfg.percentageOfNodesToScore).toBe(20);
    expect(cfg.profiles[1]).toEqual({
      schedulerName: 'bin-packer',
      plugins: { score: { enabled: [{ name: 'NodeResourcesFit', weight: 5 }], disabled: [{ name: '*' }] } },
      pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'MostAllocated' } } }],
    });
  });

  it.each<{ name: string; text: string; want: string[] }>([
    { name: 'not YAML', text: 'a: [', want: [expect.stringContaining('<file>: Invalid value: not valid YAML') as unknown as string] },
    { name: 'wrong kind', text: 'apiVersion: orch.io/v1\nkind: Nope\n', want: ['kind: Unsupported value: "Nope": supported values: "SchedulerConfiguration"'] },
    { name: 'wrong apiVersion', text: 'apiVersion: v1\nkind: SchedulerConfiguration\n', want: ['apiVersion: Unsupported value: "v1": supported values: "orch.io/v1"'] },
    { name: 'unknown top-level field', text: `${header}foo: 1\n`, want: ['foo: Invalid value: unknown field'] },
    { name: 'percentage out of range', text: `${header}percentageOfNodesToScore: 101\n`, want: ['percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]'] },
    {
      name: 'max backoff below initial',
      text: `${header}podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n`,
      want: ['podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds'],
    },
    {
      name: 'duplicate scheduler names',
      text: `${header}profiles: [{schedulerName: a}, {schedulerName: a}]\n`,
      want: ['profiles[1].schedulerName: Duplicate value: "a"'],
    },
    {
      name: 'unknown extension point',
      text: `${header}profiles: [{schedulerName: a, plugins: {sort: {}}}]\n`,
      want: [expect.stringContaining('profiles[0].plugins.sort: Unsupported value: "sort"') as unknown as string],
    },
    {
      name: 'unknown plugin',
      text: `${header}profiles: [{schedulerName: a, plugins: {filter: {enabled: [{name: Magic}]}}}]\n`,
      want: ['profiles[0].plugins.filter.enabled[0].name: Invalid value: "Magic": plugin not found in the registry'],
    },
    {
      name: 'negative weight',
      text: `${header}profiles: [{schedulerName: a, plugins: {score: {enabled: [{name: ImageLocality, weight: -1}]}}}]\n`,
      want: ['profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: must be a non-negative integer'],
    },
    {
      name: 'plugin args are validated',
      text: `${header}profiles: [{schedulerName: a, pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: Random}}}]}]\n`,
      want: ['profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Random": supported values: "LeastAllocated", "MostAllocated"'],
    },
    {
      name: 'duplicate plugin config',
      text: `${header}profiles: [{schedulerName: a, pluginConfig: [{name: NodeAffinity}, {name: NodeAffinity}]}]\n`,
      want: ['profiles[0].pluginConfig[1].name: Duplicate value: "NodeAffinity"'],
    },
  ])('rejects: $name', ({ text, want }) => {
    expect(errorsOf(text)).toEqual(want);
  });
});

describe('mergePluginSet', () => {
  const defaults: PluginSet = { enabled: [{ name: 'A' }, { name: 'B', weight: 2 }, { name: 'C' }] };
  it.each<{ name: string; custom?: PluginSet; want: string[] }>([
    { name: 'no custom set', want: ['A', 'B:2', 'C'] },
    { name: 'disable one', custom: { disabled: [{ name: 'B' }] }, want: ['A', 'C'] },
    { name: 'disable all and enable one', custom: { disabled: [{ name: '*' }], enabled: [{ name: 'C' }] }, want: ['C'] },
    { name: 'reconfigure in place', custom: { enabled: [{ name: 'B', weight: 7 }] }, want: ['A', 'B:7', 'C'] },
    { name: 'append custom', custom: { enabled: [{ name: 'D' }] }, want: ['A', 'B:2', 'C', 'D'] },
  ])('$name', ({ custom, want }) => {
    expect((mergePluginSet(defaults, custom).enabled ?? []).map((p) => (p.weight ? `${p.name}:${p.weight}` : p.name))).toEqual(want);
  });
});
