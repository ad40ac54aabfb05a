import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { createSecureContext, type SecureContext } from 'node:tls';
import { SignJWT, generateKeyPair } from 'jose';

/** What the attacker process tries (bench auth: bad credentials must gain nothing). */
export interface AttackJob {
  url: string;
  ca: string;
  path: string;
  /** The local address every connection is made from (distinct from the victim's 127.0.0.1). */
  source: string;
  /** The gateway's service-account issuer: forged JWTs name it, so they reach signature checks. */
  issuer: string;
  concurrency: number;
  /** Garbled bearer tokens to try, every one distinct. */
  tokens: number;
  /** Client certificates of another CA, tried round-robin on fresh TLS connections. */
  certs: { certPem: string; keyPem: string }[];
  certAttempts?: number;
  /** A fresh TLS connection for every token attempt too (the handshake cost without a client certificate, for comparison). */
  freshConnections?: boolean;
}

/**
 * Bearer tokens nobody issued, of every shape an authenticator looks at: random bytes,
 * bootstrap-token shaped, static-token shaped, JWTs with the gateway's own issuer signed by a
 * foreign key (the service-account authenticator verifies each signature), JWTs with junk
 * parts, and oversized ones. Every one distinct (no cache helps the attacker or the gateway).
 */
async function garbledTokens(count: number, issuer: string): Promise<string[]> {
  const { privateKey } = await generateKeyPair('ES256');
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const random = randomBytes(24).toString('base64url');
    switch (i % 6) {
      case 0:
        out.push(random);
        break;
      case 1:
        out.push(`${random.slice(0, 6).toLowerCase()}.${randomBytes(8).toString('hex')}`);
        break;
      case 2:
        out.push(
          await new SignJWT({ 'kubernetes.io': { namespace: 'bench', serviceaccount: { name: 'reader', uid: random } } })
            .setProtectedHeader({ alg: 'ES256', kid: random })
            .setIssuer(issuer)
            .setSubject('system:serviceaccount:bench:reader')
            .setAudience(issuer)
            .setIssuedAt()
            .setExpirationTime('1h')
            .sign(privateKey),
        );
        break;
      case 3:
        out.push(`${Buffer.from(JSON.stringify({ alg: 'RS256', kid: random })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: issuer, sub: random })).toString('base64url')}.${random}`);
        break;
      case 4:
        out.push(`${random}.${random}.${random}`);
        break;
      default:
        out.push(randomBytes(6 * 1024).toString('base64url'));
    }
  }
  return out;
}

/**
 * One bad credential: a bearer token, or a client certificate on a fresh TLS connection. TLS
 * contexts (CA, certificate and key parsed) are made once, so that reconnecting costs the
 * attacker no more than it must and its rate stays the server's to limit.
 */
type Credential = { token: string } | { cert: SecureContext };

/**
 * What one attempt got; each is nothing: a 401 Status, a 429 Status (the source is over the
 * gateway's --authentication-failure-limit), or the connection closed unanswered (reset before TLS).
 */
export type Outcome = 'unauthorized' | 'limited' | 'refused';

/** Errors of a connection the server reset or closed without an answer. */
const CLOSED = new Set(['ECONNRESET', 'EPIPE']);

/** One GET with a bad credential; rejects on anything but a bare 401 or 429 Status or a closed connection. */
function attempt(job: AttackJob, agent: https.Agent, plain: SecureContext, cred: Credential): Promise<Outcome> {
  const cert = 'cert' in cred ? cred.cert : undefined;
  const fresh = { agent: false as const, secureContext: plain, localAddress: job.source };
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${job.url}${job.path}`,
      {
        method: 'GET',
        // A fresh TLS handshake for each certificate attempt.
        ...(cert ? { ...fresh, secureContext: cert } : job.freshConnections ? fresh : { agent }),
        headers: { accept: 'application/json', ...('token' in cred ? { authorization: `Bearer ${cred.token}` } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const bareStatus = body.includes('"kind":"Status"') && !body.includes('"data"');
          if (bareStatus && res.statusCode === 401) resolve('unauthorized');
          else if (bareStatus && res.statusCode === 429) resolve('limited');
          else reject(new Error(`a bad credential got ${res.statusCode}: ${body.slice(0, 200)}`));
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => (CLOSED.has(err.code ?? '') ? resolve('refused') : reject(err)));
    req.end();
  });
}

/** Every credential of the job, made before the attack starts (forging JWTs takes a while). */
async function credentials(job: AttackJob): Promise<Credential[]> {
  const contexts = job.certs.map((c) => createSecureContext({ ca: job.ca, cert: c.certPem, key: c.keyPem }));
  return [
    ...(await garbledTokens(job.tokens, job.issuer)).map((token) => ({ token })),
    ...Array.from({ length: job.certAttempts ?? 0 }, (_, i) => ({ cert: contexts[i % contexts.length] })),
  ];
}

/** What an attack did: attempts made, seconds taken, and what the attempts got. */
export type AttackResult = { attempts: number; seconds: number } & Record<Outcome, number>;

/** Tries every credential, `job.concurrency` at once, from `job.source`. */
async function attack(job: AttackJob, creds: Credential[]): Promise<AttackResult> {
  const plain = createSecureContext({ ca: job.ca });
  const agent = new https.Agent({ keepAlive: true, maxSockets: job.concurrency, secureContext: plain, localAddress: job.source });
  const got: Record<Outcome, number> = { unauthorized: 0, limited: 0, refused: 0 };
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (next < creds.length) got[await attempt(job, agent, plain, creds[next++])]++;
    }),
  );
  agent.destroy();
  return { attempts: creds.length, seconds: (performance.now() - started) / 1000, ...got };
}

/**
 * Run as a child process of the bench (`node auth-attacker.js`, so its CPU priority can be set
 * apart from the victim's): reads the AttackJob as one JSON line on stdin, makes the
 * credentials, prints `ready`, attacks when it reads `go`, then prints its AttackResult as one
 * JSON line (it exits 1 if any attempt got anything but 401, 429 or a closed connection).
 */
if (require.main === module) {
  const lines = createInterface({ input: process.stdin });
  let creds: Promise<Credential[]> | undefined;
  let job: AttackJob;
  lines.on('line', (line) => {
    if (!creds) {
      job = JSON.parse(line) as AttackJob;
      creds = credentials(job);
      void creds.then(() => process.stdout.write('ready\n'));
      return;
    }
    if (line !== 'go') return;
    void creds.then((c) => attack(job, c)).then(
      (r) => {
        process.stdout.write(`${JSON.stringify(r)}\n`);
        lines.close();
      },
      (err: unknown) => {
        process.stderr.write(`attacker: ${(err as Error).stack ?? String(err)}\n`);
        process.exit(1);
      },
    );
  });
}
