import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { SignJWT, generateKeyPair } from 'jose';

/** What the attacker process tries (bench auth: bad credentials must gain nothing). */
export interface AttackJob {
  url: string;
  ca: string;
  path: string;
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

/** One bad credential: a bearer token, or a client certificate on a fresh TLS connection. */
type Credential = { token: string } | { cert: { certPem: string; keyPem: string } };

/** One GET with a bad credential; rejects unless the answer is a 401 Status without data. */
function attempt(job: AttackJob, agent: https.Agent, cred: Credential): Promise<void> {
  const cert = 'cert' in cred ? cred.cert : undefined;
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${job.url}${job.path}`,
      {
        method: 'GET',
        // A fresh TLS handshake for each certificate attempt.
        ...(cert ? { agent: false, ca: job.ca, cert: cert.certPem, key: cert.keyPem } : job.freshConnections ? { agent: false, ca: job.ca } : { agent }),
        headers: { accept: 'application/json', ...('token' in cred ? { authorization: `Bearer ${cred.token}` } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 401 || !body.includes('"kind":"Status"') || body.includes('"data"')) reject(new Error(`a bad credential got ${res.statusCode}: ${body.slice(0, 200)}`));
          else resolve();
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Every credential of the job, made before the attack starts (forging JWTs takes a while). */
async function credentials(job: AttackJob): Promise<Credential[]> {
  return [
    ...(await garbledTokens(job.tokens, job.issuer)).map((token) => ({ token })),
    ...Array.from({ length: job.certAttempts ?? 0 }, (_, i) => ({ cert: job.certs[i % job.certs.length] })),
  ];
}

/** Tries every credential, `job.concurrency` at once; resolves with the attempts made and the seconds taken. */
async function attack(job: AttackJob, creds: Credential[]): Promise<{ attempts: number; seconds: number }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: job.concurrency, ca: job.ca });
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (next < creds.length) await attempt(job, agent, creds[next++]);
    }),
  );
  agent.destroy();
  return { attempts: creds.length, seconds: (performance.now() - started) / 1000 };
}

/**
 * Run as a child process of the bench (`node auth-attacker.js`, so its CPU priority can be set
 * apart from the victim's): reads the AttackJob as one JSON line on stdin, makes the
 * credentials, prints `ready`, attacks when it reads `go`, then prints
 * `{"attempts":N,"seconds":S}` (it exits 1 if any attempt was not a 401).
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
