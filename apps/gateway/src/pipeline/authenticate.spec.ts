import type { FastifyReply, FastifyRequest } from 'fastify';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { StatusError } from '@orch/apimachinery';
import type { Authenticator } from '@orch/auth';
import { parseRequestInfo } from '../request/request-info';
import { authenticateStage } from './authenticate';
import { newApiRequest } from './pipeline';

/** A bearer-token authenticator with one known token: enough to drive the stage. */
const oneToken: Authenticator = {
  async authenticate(req) {
    const h = req.headers.authorization;
    if (!h) return null;
    if (h === 'Bearer good') return { username: 'alice', groups: ['system:authenticated'] };
    if (!String(h).startsWith('Bearer ')) return null;
    throw StatusError.unauthorized();
  },
};

function request(path: string, authorization?: string) {
  const raw = new IncomingMessage(new Socket());
  if (authorization) raw.headers.authorization = authorization;
  const r = newApiRequest({ method: 'GET', url: path, headers: raw.headers, raw } as unknown as FastifyRequest, {} as FastifyReply);
  r.info = parseRequestInfo('GET', r.path, r.query);
  return r;
}

describe('authenticateStage', () => {
  it.each([
    { name: 'a valid credential', path: '/api/v1/pods', auth: 'Bearer good', anonymous: true, want: 'alice' },
    { name: 'no credential, anonymous on', path: '/api/v1/pods', auth: undefined, anonymous: true, want: 'system:anonymous' },
  ])('$name → $want', async ({ path, auth, anonymous, want }) => {
    const r = request(path, auth);
    await authenticateStage(oneToken, { anonymousAuth: anonymous })(r);
    expect(r.authenticatedUser?.username).toBe(want);
  });

  it.each([
    { name: 'an invalid credential is 401, never anonymous', path: '/api/v1/pods', auth: 'Bearer bad', anonymous: true },
    { name: 'no credential with anonymous off', path: '/api/v1/pods', auth: undefined, anonymous: false },
    { name: 'no credential with anonymous off, health path', path: '/readyz', auth: undefined, anonymous: false },
    { name: 'no credential with anonymous off, version path', path: '/version', auth: undefined, anonymous: false },
    { name: 'an Authorization header nobody claims', path: '/api/v1/pods', auth: 'Basic dXNlcjpwdw==', anonymous: true },
  ])('$name', async ({ path, auth, anonymous }) => {
    await expect(authenticateStage(oneToken, { anonymousAuth: anonymous })(request(path, auth))).rejects.toMatchObject({ code: 401 });
  });
});
