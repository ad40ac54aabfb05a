import https from 'node:https';

export interface Credentials {
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  /** The body parsed as JSON, when it is JSON. */
  json: any;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  insecure?: boolean;
}

/**
 * A deliberately raw HTTPS client for tests: sends exactly the bytes and headers given,
 * so bad-input tests can send what real clients would never send.
 */
export class ApiClient {
  private readonly agent: https.Agent;

  constructor(
    readonly baseUrl: string,
    private readonly creds: Credentials,
  ) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 256, ca: creds.ca, cert: creds.cert, key: creds.key });
  }

  request(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<RawResponse> {
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json', ...(opts.headers ?? {}) };
    if (payload && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    // Frame every body (Node does not frame a DELETE body on its own).
    if (payload) headers['content-length'] = String(payload.length);
    if (this.creds.token) headers.authorization = `Bearer ${this.creds.token}`;
    return new Promise((resolve, reject) => {
      let answered = false;
      const req = https.request(
        new URL(path, this.baseUrl),
        { method, headers, agent: opts.insecure ? new https.Agent({ rejectUnauthorized: false }) : this.agent, rejectUnauthorized: !opts.insecure },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const buf = Buffer.concat(chunks);
            const text = buf.toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, text, json });
          });
          res.on('error', reject);
        },
      );
      // A server may answer before it has read the whole body (413 for one over its limit) and
      // close: the answer counts, the rest of the upload does not. (The gateway reads what is
      // still sent while it closes, so the answer arrives instead of EPIPE: edge.ts lingerOnClose.)
      req.on('error', (err) => {
        if (!answered) reject(err);
      });
      if (payload) req.write(payload);
      req.end();
    });
  }

  get(path: string, opts?: RequestOptions) {
    return this.request('GET', path, undefined, opts);
  }
  post(path: string, body: unknown, opts?: RequestOptions) {
    return this.request('POST', path, body, opts);
  }
  put(path: string, body: unknown, opts?: RequestOptions) {
    return this.request('PUT', path, body, opts);
  }
  patch(path: string, body: unknown, contentType: string, opts: RequestOptions = {}) {
    return this.request('PATCH', path, body, { ...opts, headers: { 'content-type': contentType, ...(opts.headers ?? {}) } });
  }
  delete(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request('DELETE', path, body, opts);
  }

  /**
   * Opens a watch and collects events until `until` returns true for the events so far
   * (or timeoutMs passes); then closes the stream.
   */
  watch(path: string, until: (events: any[]) => boolean, timeoutMs = 10_000, headers: Record<string, string> = {}): Promise<{ status: number; events: any[] }> {
    return new Promise((resolve, reject) => {
      const events: any[] = [];
      let buffered = '';
      const req = https.request(new URL(path, this.baseUrl), { method: 'GET', headers: { accept: 'application/json', ...headers }, agent: this.agent }, (res) => {
        const done = () => {
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, events });
        };
        const timer = setTimeout(done, timeoutMs);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line) events.push(JSON.parse(line));
          }
          if (res.statusCode !== 200 || until(events)) done();
        });
        res.on('end', done);
        // The server went away mid-stream (killed): what arrived so far is the answer.
        res.on('error', done);
      });
      req.on('error', (err) => (events.length ? resolve({ status: 200, events }) : reject(err)));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
