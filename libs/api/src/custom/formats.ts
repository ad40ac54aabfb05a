import { isIP } from 'node:net';

// String formats a custom resource schema may name (upstream apiextensions supported formats,
// kube-openapi strfmt). Unknown formats are not checked, as upstream.

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const HOSTNAME = /^(?=.{1,255}$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;
const MAC = /^(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^(?:[0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^(?:[0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGBCOLOR = /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const DURATION = /^[-+]?(?:\d+(?:\.\d*)?(?:ns|us|µs|ms|s|m|h|d|w))+$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function validDate(y: number, m: number, d: number): boolean {
  return m >= 1 && m <= 12 && d >= 1 && d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  const family = isIP(ip);
  if (!family || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

function isUri(s: string): boolean {
  try {
    return new URL(s).protocol.length > 1;
  } catch {
    return false;
  }
}

const CHECKS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => BSON_OBJECT_ID.test(s),
  uri: isUri,
  email: (s) => EMAIL.test(s),
  hostname: (s) => HOSTNAME.test(s),
  ipv4: (s) => isIP(s) === 4,
  ipv6: (s) => isIP(s) === 6,
  cidr: isCidr,
  mac: (s) => MAC.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => {
    const m = RGBCOLOR.exec(s);
    return !!m && m.slice(1).every((x) => Number(x) <= 255);
  },
  ssn: (s) => SSN.test(s),
  byte: (s) => BASE64.test(s.replace(/\s/g, '')),
  password: () => true,
  date: (s) => {
    const m = DATE.exec(s);
    return !!m && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
  },
  datetime: (s) => {
    const m = DATE_TIME.exec(s);
    return !!m && validDate(Number(m[1]), Number(m[2]), Number(m[3])) && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 61;
  },
  duration: (s) => DURATION.test(s),
};

/** The formats upstream knows (others are accepted and not checked). */
export const SUPPORTED_FORMATS: readonly string[] = [...Object.keys(CHECKS), 'date-time', 'int32', 'int64', 'float', 'double', 'isbn', 'isbn10', 'isbn13', 'creditcard'];

/**
 * The format's name when `value` does not have it, undefined when it does (or the format is
 * not one that is checked).
 */
export function checkFormat(format: string, value: string): string | undefined {
  const check = CHECKS[format.replace(/-/g, '').toLowerCase()];
  return check && !check(value) ? format : undefined;
}
