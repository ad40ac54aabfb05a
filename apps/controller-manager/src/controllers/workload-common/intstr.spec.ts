import { scaledValue } from './intstr';

describe('scaledValue (intstr.GetScaledValueFromIntOrPercent)', () => {
  it.each([
    { value: 2, total: 10, roundUp: true, want: 2 },
    { value: '25%', total: 3, roundUp: true, want: 1 },
    { value: '25%', total: 3, roundUp: false, want: 0 },
    { value: '50%', total: 5, roundUp: true, want: 3 },
    { value: '50%', total: 5, roundUp: false, want: 2 },
    { value: '100%', total: 7, roundUp: false, want: 7 },
    { value: '0%', total: 7, roundUp: true, want: 0 },
    { value: '3', total: 7, roundUp: true, want: 3 },
    { value: undefined, total: 7, roundUp: true, want: 0 },
  ])('$value of $total (roundUp $roundUp) → $want', ({ value, total, roundUp, want }) => {
    expect(scaledValue(value, total, roundUp)).toBe(want);
  });

  it.each(['abc', '25 %', '%'])('rejects %p', (value) => {
    expect(() => scaledValue(value, 10, true)).toThrow(/invalid value/);
  });
});
