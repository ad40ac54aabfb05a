import { parseTokenFile, tokenFileAuthenticator } from './token-file';

const FILE = `# static users
t0ken-alice,alice,1001,"devs,ops"
t0ken-bob,bob,1002
t0ken-carol,carol,,admins,auditors
`;

describe('token file', () => {
  const authn = tokenFileAuthenticator(parseTokenFile(FILE));
  const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

  it.each([
    { name: 'quoted groups', token: 't0ken-alice', want: { username: 'alice', uid: '1001', groups: ['devs', 'ops'] } },
    { name: 'no groups', token: 't0ken-bob', want: { username: 'bob', uid: '1002', groups: [] } },
    { name: 'groups as columns, empty uid', token: 't0ken-carol', want: { username: 'carol', groups: ['admins', 'auditors'] } },
  ])('$name', async ({ token, want }) => {
    expect(await authn.authenticate(bearer(token))).toEqual(want);
  });

  it.each([
    { name: 'an unknown token', req: bearer('nope') },
    { name: 'a token that differs by one character', req: bearer('t0ken-alicf') },
    { name: 'no Authorization header', req: { headers: {} } },
    { name: 'a Basic header', req: { headers: { authorization: 'Basic YTpi' } } },
  ])('does not claim $name', async ({ req }) => {
    expect(await authn.authenticate(req)).toBeNull();
  });

  it.each([
    { name: 'too few columns', text: 'tok,user', message: 'token file:1: need at least token,user,uid' },
    { name: 'an empty user', text: 'tok,,1', message: 'token file:1: token and user name must not be empty' },
    { name: 'an unterminated quote', text: 'tok,user,1,"a,b', message: 'token file:1: unterminated quoted field' },
    { name: 'a duplicate token', text: 'tok,a,1\ntok,b,2', message: 'token file:2: duplicate token' },
  ])('refuses $name', ({ text, message }) => {
    expect(() => parseTokenFile(text)).toThrow(message);
  });
});
