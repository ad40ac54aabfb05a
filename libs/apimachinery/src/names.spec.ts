import {
  GENERATED_NAME_ALPHABET,
  MAX_GENERATED_NAME_LENGTH,
  generateName,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validatePathSegmentName,
} from './names';

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('name checks', () => {
  it.each([
    // RFC 1123 labels
    { name: 'label ok', check: isDNS1123Label, input: 'my-name-1', want: [] },
    { name: 'label digit start', check: isDNS1123Label, input: '1abc', want: [] },
    { name: 'label 63', check: isDNS1123Label, input: 'a'.repeat(63), want: [] },
    { name: 'label 64', check: isDNS1123Label, input: 'a'.repeat(64), want: ['must be no more than 63 characters'] },
    { name: 'label upper', check: isDNS1123Label, input: 'Abc', want: [LABEL_MSG] },
    { name: 'label dash end', check: isDNS1123Label, input: 'abc-', want: [LABEL_MSG] },
    { name: 'label empty', check: isDNS1123Label, input: '', want: [LABEL_MSG] },
    { name: 'label with dots', check: isDNS1123Label, input: 'a.b', want: ['must not contain dots'] },
    // RFC 1123 subdomains
    { name: 'subdomain ok', check: isDNS1123Subdomain, input: 'example.com', want: [] },
    { name: 'subdomain upper', check: isDNS1123Subdomain, input: 'Example.com', want: [SUBDOMAIN_MSG] },
    { name: 'subdomain double dot', check: isDNS1123Subdomain, input: 'a..b', want: [SUBDOMAIN_MSG] },
    { name: 'subdomain 253', check: isDNS1123Subdomain, input: `${'a'.repeat(63)}.`.repeat(3) + 'a'.repeat(61), want: [] },
    { name: 'subdomain 254', check: isDNS1123Subdomain, input: 'a'.repeat(254), want: ['must be no more than 253 characters'] },
    // DNS-1035 labels
    { name: '1035 ok', check: isDNS1035Label, input: 'svc-1', want: [] },
    { name: '1035 digit start', check: isDNS1035Label, input: '1svc', want: [DNS1035_MSG] },
    { name: '1035 too long', check: isDNS1035Label, input: 'a'.repeat(64), want: ['must be no more than 63 characters'] },
    // qualified names
    { name: 'qualified plain', check: isQualifiedName, input: 'MyName', want: [] },
    { name: 'qualified prefixed', check: isQualifiedName, input: 'app.orch.io/name', want: [] },
    { name: 'qualified empty prefix', check: isQualifiedName, input: '/name', want: ['prefix part must be non-empty'] },
    { name: 'qualified bad prefix', check: isQualifiedName, input: 'Example.com/a', want: [`prefix part ${SUBDOMAIN_MSG}`] },
    { name: 'qualified empty name', check: isQualifiedName, input: 'a/', want: ['name part must be non-empty', `name part ${QNAME_MSG}`] },
    { name: 'qualified long name', check: isQualifiedName, input: 'a'.repeat(64), want: ['name part must be no more than 63 characters'] },
    { name: 'qualified bad name', check: isQualifiedName, input: '-a', want: [`name part ${QNAME_MSG}`] },
    {
      name: 'qualified two slashes',
      check: isQualifiedName,
      input: 'a/b/c',
      want: [`a qualified name ${QNAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`],
    },
    // label values
    { name: 'value empty', check: isValidLabelValue, input: '', want: [] },
    { name: 'value ok', check: isValidLabelValue, input: 'my_value-1.2', want: [] },
    { name: 'value bad start', check: isValidLabelValue, input: '_a', want: [LABEL_VALUE_MSG] },
    { name: 'value too long', check: isValidLabelValue, input: 'a'.repeat(64), want: ['must be no more than 63 characters'] },
  ])('$name', ({ check, input, want }) => {
    expect(check(input)).toEqual(want);
  });
});

describe('path segment names', () => {
  it.each([
    { name: 'plain', input: 'a:b', prefix: false, want: [] },
    { name: 'dot', input: '.', prefix: false, want: ["may not be '.'"] },
    { name: 'dot dot', input: '..', prefix: false, want: ["may not be '..'"] },
    { name: 'slash and percent', input: 'a/b%', prefix: false, want: ["may not contain '/'", "may not contain '%'"] },
    { name: 'prefix may be a dot', input: '.', prefix: true, want: [] },
    { name: 'prefix slash', input: 'a/', prefix: true, want: ["may not contain '/'"] },
  ])('$name', ({ input, prefix, want }) => {
    expect(validatePathSegmentName(input, prefix)).toEqual(want);
  });
});

describe('generateName prefixes', () => {
  it.each([
    { name: 'subdomain prefix with dash', check: nameIsDNSSubdomain, input: 'web-', prefix: true, want: [] },
    { name: 'subdomain full name with dash', check: nameIsDNSSubdomain, input: 'web-', prefix: false, want: [SUBDOMAIN_MSG] },
    { name: 'label prefix with dash', check: nameIsDNSLabel, input: 'web-', prefix: true, want: [] },
    { name: '1035 prefix with dash', check: nameIsDNS1035Label, input: 'web-', prefix: true, want: [] },
    { name: 'masking replaces the last two characters (upstream)', check: nameIsDNS1035Label, input: '1-', prefix: true, want: [] },
  ])('$name', ({ check, input, prefix, want }) => {
    expect(check(input, prefix)).toEqual(want);
  });
});

describe('generateName', () => {
  const suffix = `[${GENERATED_NAME_ALPHABET}]{5}`;
  it.each([
    { name: 'short base', base: 'pod-', want: new RegExp(`^pod-${suffix}$`) },
    { name: 'empty base', base: '', want: new RegExp(`^${suffix}$`) },
    { name: 'long base is cut', base: 'a'.repeat(70), want: new RegExp(`^a{${MAX_GENERATED_NAME_LENGTH}}${suffix}$`) },
  ])('$name', ({ base, want }) => {
    const name = generateName(base);
    expect(name).toMatch(want);
    expect(name.length).toBeLessThanOrEqual(63);
  });

  it('differs between calls', () => {
    expect(new Set(Array.from({ length: 20 }, () => generateName('x-'))).size).toBeGreaterThan(1);
  });
});
