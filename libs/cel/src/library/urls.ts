// URL library (SPEC "Validation expressions": isURL, url, getScheme, getHost, getHostname,
// getPort, getEscapedPath, getQuery; upstream apiserver/pkg/cel/library/urls.go). URLs are
// parsed as Go's url.ParseRequestURI does: an absolute URI or an absolute path, no fragment
// handling (a `#` stays in the path).

import { evalError, type Environment } from '../engine';

const sync = { async: false };

/** A parsed URL (the `net.URL` type of expressions). */
export class CelURL {
  constructor(
    readonly text: string,
    readonly scheme: string,
    readonly host: string,
    /** The path as written (still escaped). */
    readonly rawPath: string,
    readonly rawQuery: string,
  ) {}

  getScheme(): string {
    return this.scheme;
  }

  getHost(): string {
    return this.host;
  }

  /** The host without port; IPv6 literals without brackets. */
  getHostname(): string {
    const h = this.host;
    if (h.startsWith('[')) {
      const end = h.indexOf(']');
      return end < 0 ? h.slice(1) : h.slice(1, end);
    }
    const colon = h.lastIndexOf(':');
    return colon < 0 ? h : h.slice(0, colon);
  }

  getPort(): string {
    const h = this.host;
    const colon = h.lastIndexOf(':');
    if (colon < 0 || (h.startsWith('[') && colon < h.indexOf(']'))) return '';
    return h.slice(colon + 1);
  }

  getEscapedPath(): string {
    return validEncoded(this.rawPath) && unescape(this.rawPath) !== undefined ? this.rawPath : escapePath(unescape(this.rawPath) ?? this.rawPath);
  }

  /** Query parameters: each key with its values in order; malformed pairs are skipped (as Go's Query()). */
  getQuery(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const pair of this.rawQuery.split('&')) {
      if (pair === '' || pair.includes(';')) continue;
      const eq = pair.indexOf('=');
      const key = unescape(eq < 0 ? pair : pair.slice(0, eq), true);
      const value = unescape(eq < 0 ? '' : pair.slice(eq + 1), true);
      if (key === undefined || value === undefined) continue;
      const list = out.get(key) ?? [];
      list.push(value);
      out.set(key, list);
    }
    return out;
  }

  equals(other: CelURL): boolean {
    return this.text === other.text;
  }

  toString(): string {
    return this.text;
  }
}

const HEX = /^[0-9a-fA-F]{2}$/;

/** Percent-decoding; undefined for a malformed escape. `query` also turns `+` into a space. */
function unescape(s: string, query = false): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!HEX.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c === '+' && query) bytes.push(0x20);
    else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

const PATH_SAFE = /[A-Za-z0-9\-_.~$&+,/:;=@]/;

function escapePath(path: string): string {
  let out = '';
  for (const b of Buffer.from(path, 'utf8')) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && PATH_SAFE.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's validEncoded(s, encodePath): only characters a path may hold unescaped, and escapes. */
function validEncoded(s: string): boolean {
  for (const c of s) {
    if (/[A-Za-z0-9\-_.~!$&'()*+,;=:@[\]/%]/.test(c)) continue;
    return false;
  }
  return true;
}

/** Go's getScheme: `[a-zA-Z][a-zA-Z0-9+-.]*:`; a leading non-letter before `:` is an error. */
function splitScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new Error('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function validHost(host: string): void {
  let hostPart = host;
  let port = '';
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) throw new Error("missing ']' in host");
    const rest = host.slice(end + 1);
    if (rest !== '' && !/^:[0-9]*$/.test(rest)) throw new Error(`invalid port "${rest}" after host`);
    return;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0) {
    hostPart = host.slice(0, colon);
    port = host.slice(colon + 1);
    if (!/^[0-9]*$/.test(port)) throw new Error(`invalid port ":${port}" after host`);
  }
  for (const c of hostPart) {
    if (/[A-Za-z0-9\-_.~!$&'()*+,;=:%[\]]/.test(c) || c.charCodeAt(0) >= 0x80) continue;
    throw new Error(`invalid character "${c}" in host name`);
  }
}

/** Parses like Go's url.ParseRequestURI; throws with Go's reason when the text is not a URL. */
export function parseRequestURI(raw: string): CelURL {
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw new Error('net/url: invalid control character in URL');
  if (raw === '') throw new Error('empty url');
  if (raw === '*') return new CelURL(raw, '', '', '*', '');
  const [schemeText, afterScheme] = splitScheme(raw);
  const scheme = schemeText.toLowerCase();
  let rest = afterScheme;
  let rawQuery = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    if (scheme !== '') return new CelURL(raw, scheme, '', '', rawQuery); // opaque, e.g. mailto:a@b
    throw new Error('invalid URI for request');
  }
  let host = '';
  if (scheme !== '' && rest.startsWith('//')) {
    const authorityEnd = rest.indexOf('/', 2);
    const authority = authorityEnd < 0 ? rest.slice(2) : rest.slice(2, authorityEnd);
    rest = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
    const at = authority.lastIndexOf('@');
    host = at < 0 ? authority : authority.slice(at + 1);
    validHost(host);
  }
  if (unescape(rest) === undefined) throw new Error(`invalid URL escape in "${rest}"`);
  return new CelURL(raw, scheme, host, rest, rawQuery);
}

export function isURL(s: string): boolean {
  try {
    parseRequestURI(s);
    return true;
  } catch {
    return false;
  }
}

export function url(s: string): CelURL {
  try {
    return parseRequestURI(s);
  } catch (e) {
    throw evalError(`URL parse error during conversion from string: parse "${s}": ${(e as Error).message}`);
  }
}

export function registerUrls(env: Environment): void {
  env.registerType('net.URL', CelURL);
  env.registerFunction('url(string): net.URL', url, sync);
  env.registerFunction('isURL(string): bool', isURL, sync);
  env.registerFunction('net.URL.getScheme(): string', (u: CelURL) => u.getScheme(), sync);
  env.registerFunction('net.URL.getHost(): string', (u: CelURL) => u.getHost(), sync);
  env.registerFunction('net.URL.getHostname(): string', (u: CelURL) => u.getHostname(), sync);
  env.registerFunction('net.URL.getPort(): string', (u: CelURL) => u.getPort(), sync);
  env.registerFunction('net.URL.getEscapedPath(): string', (u: CelURL) => u.getEscapedPath(), sync);
  env.registerFunction('net.URL.getQuery(): map<string, list<string>>', (u: CelURL) => u.getQuery(), sync);
  env.registerOperator('net.URL == net.URL', (a: CelURL, b: CelURL) => a.equals(b));
}
