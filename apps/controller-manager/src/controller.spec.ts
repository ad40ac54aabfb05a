import { ControllersFlagError, enabledControllers, type ControllerDescriptor } from './controller';

const known: ControllerDescriptor[] = [
  { name: 'namespace', create: () => ({ name: 'namespace', run: async () => undefined }) },
  { name: 'garbagecollector', create: () => ({ name: 'garbagecollector', run: async () => undefined }) },
  { name: 'tokencleaner', disabledByDefault: true, create: () => ({ name: 'tokencleaner', run: async () => undefined }) },
];

describe('enabledControllers (--controllers)', () => {
  it.each([
    { spec: [], want: ['namespace', 'garbagecollector'] },
    { spec: ['*'], want: ['namespace', 'garbagecollector'] },
    { spec: ['*', 'tokencleaner'], want: ['namespace', 'garbagecollector', 'tokencleaner'] },
    { spec: ['*', '-namespace'], want: ['garbagecollector'] },
    { spec: ['namespace'], want: ['namespace'] },
    { spec: ['tokencleaner'], want: ['tokencleaner'] },
  ])('$spec → $want', ({ spec, want }) => {
    expect(enabledControllers(spec, known).map((c) => c.name)).toEqual(want);
  });

  it('rejects unknown controllers', () => {
    expect(() => enabledControllers(['*', '-nosuch'], known)).toThrow(ControllersFlagError);
  });
});
