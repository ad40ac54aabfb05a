import { CONTROLLER_ACCOUNTS } from '@orch/auth';
import { CONTROLLERS } from '../controllers';
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

describe('controller identities (--use-service-account-credentials)', () => {
  // Every controller but the token controller (which upstream also runs as the controller-manager)
  // has an account, and the bootstrap policy grants that account a role: a controller added
  // without either would run without permissions under RBAC.
  it.each(CONTROLLERS.map((c) => ({ name: c.name, account: c.serviceAccount })))('$name runs as $account, which the bootstrap policy grants a role', ({ name, account }) => {
    if (name === 'serviceaccount-token') {
      expect(account).toBeUndefined();
      return;
    }
    expect(CONTROLLER_ACCOUNTS).toContain(account);
  });

  it('grants no role to an account no controller uses', () => {
    const used = new Set(CONTROLLERS.map((c) => c.serviceAccount));
    expect(CONTROLLER_ACCOUNTS.filter((a) => !used.has(a))).toEqual([]);
  });
});
