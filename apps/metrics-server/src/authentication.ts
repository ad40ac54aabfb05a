import { X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** What the gateway publishes in `orch-system/extension-apiserver-authentication` (upstream keys). */
export interface AuthenticationConfig {
  /** PEM CA(s) of client certificates that authenticate their subject directly. */
  clientCa: string;
  /** PEM CA(s) of the front proxy whose identity headers are trusted. */
  requestHeaderCa: string;
  /** Common names a front-proxy certificate may have (any when empty). */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** The config from the config map's data (JSON lists as upstream writes them). */
export function authenticationConfigFrom(data: Record<string, string>): AuthenticationConfig {
  const list = (key: string, fallback: string[]) => {
    const raw = data[key];
    if (!raw) return fallback;
    try {
      const parsed = JSON.parse(raw);
      return Array.isArray(parsed) ? parsed.map(String) : fallback;
    } catch {
      return fallback;
    }
  };
  return {
    clientCa: data['client-ca-file'] ?? '',
    requestHeaderCa: data['requestheader-client-ca-file'] ?? '',
    allowedNames: list('requestheader-allowed-names', []),
    usernameHeaders: list('requestheader-username-headers', ['X-Remote-User']),
    groupHeaders: list('requestheader-group-headers', ['X-Remote-Group']),
    extraHeaderPrefixes: list('requestheader-extra-headers-prefix', ['X-Remote-Extra-']),
  };
}

export interface User {
  username: string;
  groups: string[];
  extra: Record<string, string[]>;
}

function pemBlocks(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b));
}

/** Whether `cert` (DER) is currently valid and signed by one of the PEM CAs. */
function issuedBy(cert: X509Certificate, cas: X509Certificate[]): boolean {
  const now = Date.now();
  if (new Date(cert.validFrom).getTime() > now || new Date(cert.validTo).getTime() < now) return false;
  return cas.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
}

function headerValues(headers: IncomingHttpHeaders, name: string): string[] {
  const v = headers[name.toLowerCase()];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean);
}

/** The CN and O entries of a certificate's subject (`CN=alice\nO=dev`). */
function subjectOf(cert: X509Certificate): { cn: string; orgs: string[] } {
  const lines = cert.subject.split('\n');
  return { cn: lines.find((l) => l.startsWith('CN='))?.slice(3) ?? '', orgs: lines.filter((l) => l.startsWith('O=')).map((l) => l.slice(2)) };
}

/**
 * Authenticates requests the way an upstream extension API server does (delegated
 * authentication): a client certificate from the front-proxy CA with an allowed common name
 * carries the user in the identity headers (X-Remote-User, X-Remote-Group, X-Remote-Extra-*);
 * a client certificate from the client CA is the user its subject names; anything else is
 * not authenticated (undefined). Identity headers on any other request are ignored.
 */
export class RequestAuthenticator {
  private readonly clientCas: X509Certificate[];
  private readonly proxyCas: X509Certificate[];

  constructor(private readonly config: AuthenticationConfig) {
    this.clientCas = pemBlocks(config.clientCa);
    this.proxyCas = pemBlocks(config.requestHeaderCa);
  }

  /** PEM of every CA the TLS server should ask client certificates of. */
  get caPem(): string {
    return `${this.config.clientCa}\n${this.config.requestHeaderCa}`;
  }

  authenticate(peerCertDer: Buffer | undefined, headers: IncomingHttpHeaders): User | undefined {
    if (!peerCertDer || peerCertDer.length === 0) return undefined;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(peerCertDer);
    } catch {
      return undefined;
    }
    const { cn, orgs } = subjectOf(cert);
    if (issuedBy(cert, this.proxyCas) && (this.config.allowedNames.length === 0 || this.config.allowedNames.includes(cn))) {
      const username = this.config.usernameHeaders.map((h) => headerValues(headers, h)[0]).find(Boolean);
      if (!username) return undefined;
      const groups = this.config.groupHeaders.flatMap((h) => headerValues(headers, h));
      const extra: Record<string, string[]> = {};
      for (const prefix of this.config.extraHeaderPrefixes) {
        for (const [k, v] of Object.entries(headers)) {
          if (!k.startsWith(prefix.toLowerCase()) || v === undefined) continue;
          const key = decodeURIComponent(k.slice(prefix.length));
          extra[key] = [...(extra[key] ?? []), ...(Array.isArray(v) ? v : [v])];
        }
      }
      return { username, groups, extra };
    }
    if (issuedBy(cert, this.clientCas)) return { username: cn, groups: [...orgs, 'system:authenticated'], extra: {} };
    return undefined;
  }
}
