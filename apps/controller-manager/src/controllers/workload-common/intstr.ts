import type { IntOrString } from '../../framework/api';

/**
 * upstream intstr.GetScaledValueFromIntOrPercent: an integer as is, `N%` of `total` rounded
 * up or down. Anything else throws.
 */
export function scaledValue(value: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  const m = /^(-?\d+)%$/.exec(value);
  if (!m) {
    if (/^-?\d+$/.test(value)) return Number(value);
    throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(value)}: must be an integer or a percentage (e.g. 25%)`);
  }
  const scaled = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}
