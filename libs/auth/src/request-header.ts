import { X509Certificate } from 'node:crypto';
import { StatusError } from '@orch/apimachinery';
import { certificateVerdicts, clientCertificateProblem, parsePemBundle, type Authenticator } from './authn';
import type { UserInfo } from './user';

/** The `--requestheader-*` settings (also what `extension-apiserver-authentication` publishes). */
export interface RequestHeaderConfig {
  /** PEM CA bundle of the authenticating proxy's client certificates (`--requestheader-client-ca-file`). */
  clientCa: string;
  /** Common names the proxy's certificate may have; empty: any certificate of the CA (`--requestheader-allowed-names`). */
  allowedNames: string[];
  /** Headers naming the user, first non-empty wins (`--requestheader-username-headers`, e.g. X-Remote-User). */
  usernameHeaders: string[];
  /** Headers carrying groups, every value of each (`--requestheader-group-headers`, e.g. X-Remote-Group). */
  groupHeaders: string[];
  /** Prefixes of headers carrying extra (`--requestheader-extra-headers-prefix`, e.g. X-Remote-Extra-). */
  extraHeaderPrefixes: string[];
}

function unauthorized(reason: string): StatusError {
  const e = StatusError.unauthorized();
  e.cause = new Error(`request header: ${reason}`);
  return e;
}

const values = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * The authenticating proxy (upstream headerrequest + its x509 front): a request whose client
 * certificate chains to `clientCa` (valid, client-auth usage) and, when `allowedNames` is
 * set, has one of those common names, is the user its headers name. A certificate of another
 * CA is not this authenticator's (null: x509 may claim it); a proxy certificate whose name is
 * not allowed is 401; a proxy request without a username header is not claimed (null).
 * Headers are read only from verified proxies, so a client cannot name itself by header.
 */
export function requestHeaderAuthenticator(cfg: RequestHeaderConfig, opts: { now?: () => Date } = {}): Authenticator {
  const roots = parsePemBundle(cfg.clientCa);
  if (roots.length === 0) throw new Error('--requestheader-client-ca-file holds no certificate');
  if (cfg.usernameHeaders.length === 0) throw new Error('--requestheader-username-headers must name at least one header');
  const now = opts.now ?? (() => new Date());
  const allowed = new Set(cfg.allowedNames);
  const lower = (l: string[]) => l.map((h) => h.toLowerCase());
  const usernameHeaders = lower(cfg.usernameHeaders);
  const groupHeaders = lower(cfg.groupHeaders);
  const extraPrefixes = lower(cfg.extraHeaderPrefixes);
  // A proxy keeps its connections: its certificate's verdict is kept (see certificateVerdicts).
  const verdict = certificateVerdicts(
    (peer, t) => {
      const problem = clientCertificateProblem(peer, roots, now());
      const leaf = new X509Certificate(peer.raw);
      const cn = /(?:^|\n)CN=([^\n]*)/.exec(leaf.subject)?.[1] ?? '';
      return { proxy: !problem, name: cn, until: Math.min(t + 5 * 60_000, new Date(leaf.validTo).getTime()) };
    },
    { maxEntries: 1024, now: opts.now },
  );
  return {
    async authenticate(req) {
      const peer = req.peerCertificate;
      if (!peer) return null;
      let v: ReturnType<typeof verdict>;
      try {
        v = verdict(peer);
      } catch {
        return null;
      }
      if (!v.proxy) return null;
      if (allowed.size && !allowed.has(v.name)) throw unauthorized(`client certificate common name ${JSON.stringify(v.name)} is not in --requestheader-allowed-names`);
      let username = '';
      for (const h of usernameHeaders) {
        username = values(req.headers[h]).find((x) => x.length > 0) ?? '';
        if (username) break;
      }
      if (!username) return null;
      const groups = groupHeaders.flatMap((h) => values(req.headers[h]));
      const extra: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        const prefix = extraPrefixes.find((p) => name.startsWith(p));
        if (!prefix) continue;
        const key = unescapeExtraKey(name.slice(prefix.length));
        if (!key) continue;
        (extra[key] ??= []).push(...values(value));
      }
      const user: UserInfo = { username, groups };
      if (Object.keys(extra).length) user.extra = extra;
      return user;
    },
  };
}

/** Extra keys travel lowercased and percent-encoded in header names (upstream): undo the encoding. */
function unescapeExtraKey(k: string): string {
  try {
    return decodeURIComponent(k).toLowerCase();
  } catch {
    return k.toLowerCase();
  }
}

