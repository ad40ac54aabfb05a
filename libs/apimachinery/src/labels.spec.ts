import { StatusError } from './errors';
import {
  LabelSelector,
  labelSelectorFromObject,
  labelSelectorFromSet,
  labelSelectorObjectToString,
  labelSelectorToObject,
  parseLabelSelector,
  validateLabelSelectorObject,
  type LabelSelectorObject,
} from './labels';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('parseLabelSelector canonical form', () => {
  it.each([
    { name: 'empty', input: '', want: '' },
    { name: 'equals', input: 'x=a', want: 'x=a' },
    { name: 'double equals kept', input: 'x==a', want: 'x==a' },
    { name: 'not equals', input: 'x!=a', want: 'x!=a' },
    { name: 'sorted by key', input: 'z=c,x=a,y=b', want: 'x=a,y=b,z=c' },
    { name: 'whitespace', input: ' x  =  a , y != b ', want: 'x=a,y!=b' },
    { name: 'in, values sorted and unique', input: 'x in (c, a,b,a)', want: 'x in (a,b,c)' },
    { name: 'notin', input: 'x notin (a)', want: 'x notin (a)' },
    { name: 'empty set', input: 'x in ()', want: 'x in ()' },
    { name: 'empty values in a set', input: 'x in (a,,b)', want: 'x in (,a,b)' },
    { name: 'exists', input: 'x', want: 'x' },
    { name: 'does not exist', input: '!x', want: '!x' },
    { name: 'keywords as key and value', input: 'in in (notin)', want: 'in in (notin)' },
    { name: 'empty exact value', input: 'x=', want: 'x=' },
    { name: 'prefixed key', input: 'app.orch.io/name=web', want: 'app.orch.io/name=web' },
    { name: 'gt and lt', input: 'x>1,y<5', want: 'x>1,y<5' },
    { name: 'mixed', input: 'x in (a, b, c),y notin (), !z, w', want: 'w,x in (a,b,c),y notin (),!z' },
  ])('$name', ({ input, want }) => {
    expect(parseLabelSelector(input).toString()).toBe(want);
  });
});

describe('parseLabelSelector errors', () => {
  it.each([
    { name: 'two words', input: 'x y', want: "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt" },
    { name: 'chained equals', input: 'x==a==b', want: "found '==', expected: ',' or 'end of string'" },
    { name: 'negated comparison', input: '!x=a', want: "found '=', expected: ',' or 'end of string'" },
    { name: 'leading comma', input: ',', want: "found ',', expected: !, identifier, or 'end of string'" },
    { name: 'trailing comma', input: 'x,', want: "found '', expected: identifier after ','" },
    { name: 'set without parenthesis', input: 'x in a', want: "unable to parse requirement: found 'a' expected: '('" },
    { name: 'unclosed set', input: 'x in (a', want: "unable to parse requirement: found '', expected: ',' or ')'" },
    { name: 'operator in set', input: 'x in (a=)', want: "unable to parse requirement: found '=', expected: ',' or ')'" },
    { name: 'missing value', input: 'x=(', want: "unable to parse requirement: found '(', expected: identifier" },
    {
      name: 'bad key',
      input: 'a/b/c',
      want: `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ${QNAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    },
    { name: 'bad value', input: 'x=a||y=b', want: `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${LABEL_VALUE_MSG}` },
    { name: 'gt needs an integer', input: 'x<a', want: `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer` },
  ])('$name', ({ input, want }) => {
    const err = statusOf(() => parseLabelSelector(input));
    expect(err.code).toBe(400);
    expect(err.message).toBe(`invalid label selector ${JSON.stringify(input)}: ${want}`);
  });
});

describe('LabelSelector.matches', () => {
  it.each<{ name: string; selector: string; labels: Record<string, string> | undefined; want: boolean }>([
    { name: 'empty matches all', selector: '', labels: { a: 'b' }, want: true },
    { name: 'empty matches undefined', selector: '', labels: undefined, want: true },
    { name: 'equals hit', selector: 'x=a', labels: { x: 'a' }, want: true },
    { name: 'equals miss', selector: 'x=a', labels: { x: 'b' }, want: false },
    { name: 'equals absent', selector: 'x=a', labels: {}, want: false },
    { name: 'equals empty value', selector: 'x=', labels: { x: '' }, want: true },
    { name: 'not equals absent', selector: 'x!=a', labels: {}, want: true },
    { name: 'not equals other', selector: 'x!=a', labels: { x: 'b' }, want: true },
    { name: 'not equals same', selector: 'x!=a', labels: { x: 'a' }, want: false },
    { name: 'in hit', selector: 'x in (a,b)', labels: { x: 'b' }, want: true },
    { name: 'in miss', selector: 'x in (a,b)', labels: { x: 'c' }, want: false },
    { name: 'in absent', selector: 'x in (a,b)', labels: undefined, want: false },
    { name: 'notin absent', selector: 'x notin (a,b)', labels: {}, want: true },
    { name: 'notin hit', selector: 'x notin (a,b)', labels: { x: 'a' }, want: false },
    { name: 'exists', selector: 'x', labels: { x: '' }, want: true },
    { name: 'exists absent', selector: 'x', labels: { y: 'x' }, want: false },
    { name: 'not exists', selector: '!x', labels: { y: 'x' }, want: true },
    { name: 'not exists present', selector: '!x', labels: { x: 'a' }, want: false },
    { name: 'gt', selector: 'x>1', labels: { x: '2' }, want: true },
    { name: 'gt equal', selector: 'x>1', labels: { x: '1' }, want: false },
    { name: 'gt not a number', selector: 'x>1', labels: { x: 'a' }, want: false },
    { name: 'lt', selector: 'x<1', labels: { x: '-3' }, want: true },
    { name: 'and', selector: 'x=a,!y', labels: { x: 'a', y: 'b' }, want: false },
    { name: 'inherited keys are not labels', selector: 'toString', labels: {}, want: false },
  ])('$name', ({ selector, labels, want }) => {
    expect(parseLabelSelector(selector).matches(labels)).toBe(want);
  });
});

describe('LabelSelector helpers', () => {
  it.each([
    { name: 'everything', sel: LabelSelector.everything(), want: { empty: true, matches: true, text: '' } },
    { name: 'nothing', sel: LabelSelector.nothing(), want: { empty: false, matches: false, text: '' } },
    { name: 'from set', sel: labelSelectorFromSet({ b: '2', a: '1' }), want: { empty: false, matches: true, text: 'a=1,b=2' } },
    { name: 'from empty set', sel: labelSelectorFromSet(undefined), want: { empty: true, matches: true, text: '' } },
  ])('$name', ({ sel, want }) => {
    expect({ empty: sel.empty(), matches: sel.matches({ a: '1', b: '2' }), text: sel.toString() }).toEqual(want);
  });

  it.each([
    { name: 'equals', selector: 'x=a,y', key: 'x', want: 'a' },
    { name: 'in with one value', selector: 'x in (a)', key: 'x', want: 'a' },
    { name: 'in with two values', selector: 'x in (a,b)', key: 'x', want: undefined },
    { name: 'not equals', selector: 'x!=a', key: 'x', want: undefined },
    { name: 'other key', selector: 'x=a', key: 'y', want: undefined },
  ])('requiresExactMatch: $name', ({ selector, key, want }) => {
    expect(parseLabelSelector(selector).requiresExactMatch(key)).toBe(want);
  });
});

describe('metav1.LabelSelector', () => {
  it.each<{ name: string; input: LabelSelectorObject | null; want: { text: string; matches: boolean; empty: boolean } }>([
    { name: 'null selects nothing', input: null, want: { text: '', matches: false, empty: false } },
    { name: 'empty selects everything', input: {}, want: { text: '', matches: true, empty: true } },
    { name: 'matchLabels', input: { matchLabels: { app: 'web' } }, want: { text: 'app=web', matches: true, empty: false } },
    {
      name: 'expressions',
      input: {
        matchLabels: { tier: 'front' },
        matchExpressions: [
          { key: 'app', operator: 'In', values: ['web', 'api'] },
          { key: 'env', operator: 'NotIn', values: ['prod'] },
          { key: 'tier', operator: 'Exists' },
          { key: 'zz', operator: 'DoesNotExist' },
        ],
      },
      want: { text: 'app in (api,web),env notin (prod),tier=front,tier,!zz', matches: true, empty: false },
    },
    { name: 'not matching', input: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }, want: { text: 'app notin (web)', matches: false, empty: false } },
  ])('$name', ({ input, want }) => {
    const sel = labelSelectorFromObject(input);
    expect({ text: sel.toString(), matches: sel.matches({ app: 'web', tier: 'front' }), empty: sel.empty() }).toEqual(want);
  });

  it.each<{ name: string; input: LabelSelectorObject; want: string[] }>([
    { name: 'valid', input: { matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'Exists' }] }, want: [] },
    { name: 'in without values', input: { matchExpressions: [{ key: 'a', operator: 'In' }] }, want: ["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"] },
    {
      name: 'exists with values',
      input: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      want: ["spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
    },
    {
      name: 'bad operator',
      input: { matchExpressions: [{ key: 'a', operator: 'Gt' as 'In', values: ['1'] }] },
      want: ['spec.selector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator'],
    },
    { name: 'bad key', input: { matchExpressions: [{ key: '-a', operator: 'Exists' }] }, want: [`spec.selector.matchExpressions[0].key: Invalid value: "-a": name part ${QNAME_MSG}`] },
    {
      name: 'bad expression value',
      input: { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', '-no'] }] },
      want: [`spec.selector.matchExpressions[0].values[1]: Invalid value: "-no": ${LABEL_VALUE_MSG}`],
    },
    { name: 'bad matchLabels value', input: { matchLabels: { a: '-no' } }, want: [`spec.selector.matchLabels: Invalid value: "-no": ${LABEL_VALUE_MSG}`] },
  ])('validate: $name', ({ input, want }) => {
    expect(validateLabelSelectorObject(input, 'spec.selector').map((e) => e.toString())).toEqual(want);
  });

  it('rejects an invalid selector object with 400 and causes', () => {
    const err = statusOf(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In' }] }));
    expect(err.code).toBe(400);
    expect(err.message).toBe("invalid label selector: selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'");
    expect(err.details?.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'selector.matchExpressions[0].values', message: "Required value: must be specified when `operator` is 'In' or 'NotIn'" },
    ]);
  });

  it.each([
    { name: 'labels and expressions', input: 'a=1,b in (x),c notin (y),d,!e', want: { matchLabels: { a: '1' }, matchExpressions: [
      { key: 'b', operator: 'In', values: ['x'] },
      { key: 'c', operator: 'NotIn', values: ['y'] },
      { key: 'd', operator: 'Exists' },
      { key: 'e', operator: 'DoesNotExist' },
    ] } },
    { name: 'empty', input: '', want: { matchLabels: {}, matchExpressions: [] } },
  ])('to object: $name', ({ input, want }) => {
    const obj = labelSelectorToObject(parseLabelSelector(input));
    expect(obj).toEqual(want);
    expect(labelSelectorObjectToString(obj)).toBe(parseLabelSelector(input).toString().replace('==', '='));
  });

  it.each([
    { name: 'not equals', input: 'a!=b', want: '"!=" is not a valid label selector operator' },
    { name: 'gt', input: 'a>1', want: `"gt" isn't supported in label selectors` },
  ])('to object rejects $name', ({ input, want }) => {
    expect(statusOf(() => labelSelectorToObject(parseLabelSelector(input))).message).toBe(want);
  });
});
