import type { FastifyReply, FastifyRequest } from 'fastify';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { Registry } from 'prom-client';
import { StatusError } from '@orch/apimachinery';
import type { Authenticator } from '@orch/auth';
import { createLogger } from '@orch/server-common';
import { AuthenticationFailureLimit } from '../authn/failure-limit';
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

function request(path: string, authorization?: string, from = '203.0.113.1') {
  const socket = new Socket();
  Object.defineProperty(socket, 'remoteAddress', { value: from });
  const raw = new IncomingMessage(socket);
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

describe('authenticateStage with --authentication-failure-limit=3', () => {
  const setup = () => {
    let calls = 0;
    const counting: Authenticator = { authenticate: (req) => (calls++, oneToken.authenticate(req)) };
    const failures = AuthenticationFailureLimit.fromFlags(
      {
        'authentication-failure-limit': 3,
        'authentication-failure-window': 10_000,
        'authentication-failure-cooloff': 60_000,
        'authentication-failure-max-sources': 100,
        'authentication-failure-exempt-cidrs': [],
      },
      { metrics: new Registry(), logger: createLogger('gateway', { write: () => undefined }) },
    );
    const stage = authenticateStage(counting, { anonymousAuth: false }, failures);
    /** The stage's answer to one request: the user name, or the error code. */
    const answer = async (auth: string | undefined, from = '203.0.113.1') => {
      const r = request('/api/v1/pods', auth, from);
      return stage(r).then(
        () => r.authenticatedUser!.username,
        (err: StatusError) => err.code,
      );
    };
    return { answer, calls: () => calls };
  };

  it.each<{ name: string; requests: (string | undefined)[]; want: (string | number)[] }>([
    { name: 'three bad tokens, then even a good one is 429', requests: ['Bearer bad', 'Bearer bad', 'Bearer bad', 'Bearer good'], want: [401, 401, 401, 429] },
    { name: 'successes in between reset nothing', requests: ['Bearer bad', 'Bearer good', 'Bearer bad', 'Bearer good', 'Bearer bad', 'Bearer good'], want: [401, 'alice', 401, 'alice', 401, 429] },
    { name: 'no credential with anonymous off counts too', requests: [undefined, 'Basic eA==', undefined, 'Bearer good'], want: [401, 401, 401, 429] },
    { name: 'two failures stay under the limit', requests: ['Bearer bad', 'Bearer bad', 'Bearer good', 'Bearer good'], want: [401, 401, 'alice', 'alice'] },
  ])('$name', async ({ requests, want }) => {
    const { answer } = setup();
    const got: (string | number)[] = [];
    for (const auth of requests) got.push(await answer(auth));
    expect(got).toEqual(want);
  });

  it('a refused request runs no authenticator; another source is served meanwhile', async () => {
    const { answer, calls } = setup();
    for (let i = 0; i < 3; i++) await answer('Bearer bad', '203.0.113.66');
    const before = calls();
    expect([await answer('Bearer good', '203.0.113.66'), await answer('Bearer bad', '203.0.113.66')]).toEqual([429, 429]);
    expect(calls()).toBe(before);
    expect(await answer('Bearer good', '203.0.113.67')).toBe('alice');
  });
});
