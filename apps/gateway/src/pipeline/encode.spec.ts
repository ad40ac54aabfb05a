import { StatusError } from '@orch/apimachinery';
import { errorInRequestedGroup, inRequestedGroup } from './encode';

const SERVED = 'rbac.authorization.orch.io';
const ALIAS = 'rbac.authorization.k8s.io';

describe('replies in the group the client asked for (*.k8s.io alias paths)', () => {
  it.each([
    { name: 'object', body: { apiVersion: `${SERVED}/v1`, kind: 'Role' }, want: { apiVersion: `${ALIAS}/v1`, kind: 'Role' } },
    {
      name: 'list and its items',
      body: { apiVersion: `${SERVED}/v1`, kind: 'RoleList', items: [{ apiVersion: `${SERVED}/v1`, kind: 'Role' }] },
      want: { apiVersion: `${ALIAS}/v1`, kind: 'RoleList', items: [{ apiVersion: `${ALIAS}/v1`, kind: 'Role' }] },
    },
    {
      name: 'Status details of a delete',
      body: { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'r', group: SERVED, kind: 'roles' } },
      want: { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'r', group: ALIAS, kind: 'roles' } },
    },
  ])('$name', ({ body, want }) => {
    expect(inRequestedGroup(body, SERVED, ALIAS)).toEqual(want);
    expect(inRequestedGroup(body, SERVED, SERVED)).toBe(body);
  });

  it('errors name the alias in their message and details', () => {
    const err = StatusError.notFound({ group: SERVED, resource: 'roles' }, 'r');
    const got = errorInRequestedGroup(err, SERVED, ALIAS) as StatusError;
    expect(got.toStatus()).toMatchObject({ code: 404, reason: 'NotFound', message: `roles.${ALIAS} "r" not found`, details: { group: ALIAS, name: 'r' } });
    expect(errorInRequestedGroup(err, SERVED, SERVED)).toBe(err);
  });
});
