import { StatusError } from '@orch/apimachinery';
import { splitSchemeNamePort } from './node-proxy';

describe('splitSchemeNamePort', () => {
  it.each([
    { input: 'web', want: { scheme: '', name: 'web', port: '' } },
    { input: 'web:8080', want: { scheme: '', name: 'web', port: '8080' } },
    { input: 'web:http', want: { scheme: '', name: 'web', port: 'http' } },
    { input: 'https:web:8443', want: { scheme: 'https', name: 'web', port: '8443' } },
    { input: 'http:web:', want: { scheme: 'http', name: 'web', port: '' } },
    { input: 'ftp:web:21', want: 'error' },
    { input: 'a:b:c:d', want: 'error' },
  ])('$input', ({ input, want }) => {
    if (want === 'error') expect(() => splitSchemeNamePort(input)).toThrow(StatusError);
    else expect(splitSchemeNamePort(input)).toEqual(want);
  });
});
