import { createHash } from 'node:crypto';
import type { Authenticator } from './authn';
import type { UserInfo } from './user';

/** Splits one CSV line (RFC 4180 quoting: "a,b" is one field, "" is a quote). */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (quoted) throw new Error('unterminated quoted field');
  out.push(cur);
  return out;
}

const digest = (token: string) => createHash('sha256').update(token).digest('base64');

/**
 * Parses a `--token-auth-file` (SPEC Static token file): CSV lines `token,user,uid[,groups...]`
 * where groups may be one quoted comma-separated field or further columns. Blank lines and
 * `#` comments are skipped. Throws naming the line for anything else (start-up error). Tokens
 * are kept only as SHA-256 digests.
 */
export function parseTokenFile(text: string, source = 'token file'): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    let fields: string[];
    try {
      fields = csvFields(line);
    } catch (e) {
      throw new Error(`${source}:${i + 1}: ${(e as Error).message}`);
    }
    if (fields.length < 3) throw new Error(`${source}:${i + 1}: need at least token,user,uid`);
    const [token, username, uid, ...rest] = fields.map((f) => f.trim());
    if (!token || !username) throw new Error(`${source}:${i + 1}: token and user name must not be empty`);
    const groups = rest.flatMap((g) => g.split(',').map((x) => x.trim())).filter(Boolean);
    const key = digest(token);
    if (users.has(key)) throw new Error(`${source}:${i + 1}: duplicate token`);
    users.set(key, { username, ...(uid ? { uid } : {}), groups });
  });
  return users;
}

/** Static bearer tokens (`--token-auth-file`): a listed token is its user; other tokens are not claimed. */
export function tokenFileAuthenticator(users: Map<string, UserInfo>): Authenticator {
  return {
    async authenticate(req) {
      const h = req.headers['authorization'];
      const raw = Array.isArray(h) ? h[0] : h;
      const token = raw ? /^Bearer\s+(\S+)\s*$/i.exec(raw)?.[1] : undefined;
      if (!token) return null;
      const user = users.get(digest(token));
      return user ? { ...user, groups: [...user.groups] } : null;
    },
  };
}
