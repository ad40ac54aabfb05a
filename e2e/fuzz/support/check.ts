import https from 'node:https';
import type { FuzzRequest } from './requests';

/** What came back for one request. */
export interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** A request without an answer within this time hangs (streams answer with their status line first). */
const ANSWER_TIMEOUT_MS = 10_000;

/**
 * Sends a fuzz request exactly as generated (bytes, headers, method) over a keep-alive HTTPS
 * agent. A stream is judged by its status line and closed; anything else is read to the end.
 * Rejects when the connection drops or nothing comes back in time.
 */
export async function send(agent: https.Agent, baseUrl: string, r: FuzzRequest): Promise<Answer> {
  try {
    return await sendOnce(agent, baseUrl, r);
  } catch (err) {
    // A kept-alive connection the server closed just as it was reused: send again (Node's advice).
    if ((err as { reusedSocket?: boolean }).reusedSocket) return sendOnce(agent, baseUrl, r);
    throw err;
  }
}

function sendOnce(agent: https.Agent, baseUrl: string, r: FuzzRequest): Promise<Answer> {
  const headers: Record<string, string> = { ...r.headers };
  if (r.body) headers['content-length'] = String(r.body.length);
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(r.path, baseUrl), { method: r.method, headers, agent }, (res) => {
      const contentType = String(res.headers['content-type'] ?? '');
      const status = res.statusCode ?? 0;
      if (r.streaming && status === 200) {
        req.destroy();
        resolve({ status, contentType, body: Buffer.alloc(0) });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status, contentType, body: Buffer.concat(chunks) }));
      res.on('error', (err) => reject(new Error(`the answer broke off (${status}): ${err.message}`)));
    });
    req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => reject(Object.assign(new Error(`the connection failed: ${err.message}`), { reusedSocket: req.reusedSocket && err.code === 'ECONNRESET' })));
    if (r.body) req.write(r.body);
    req.end();
  });
}

/**
 * The suite's invariant for one answer: a success, or a 4xx whose body is a well-formed Status
 * naming the problem (kind Status, code = the HTTP status, a reason and a message). Never a
 * 5xx. Returns what is wrong (empty: nothing).
 */
export function problems(r: FuzzRequest, a: Answer): string[] {
  const out: string[] = [];
  if (a.status >= 500 && !prescribed(r, a)) out.push(`answered ${a.status}: ${a.body.toString('utf8').slice(0, 500)}`);
  if (a.status < 400 || r.method === 'HEAD' || (r.streaming && a.body.length === 0 && a.status < 500)) return out;
  if (a.contentType.includes('protobuf')) {
    if (a.body.subarray(0, 4).toString('latin1') !== 'k8s\0') out.push(`a ${a.status} in protobuf without the k8s envelope`);
    return out;
  }
  let status: any;
  try {
    status = JSON.parse(a.body.toString('utf8'));
  } catch {
    out.push(`a ${a.status} whose body is not JSON (content-type ${JSON.stringify(a.contentType)}): ${a.body.toString('utf8').slice(0, 200)}`);
    return out;
  }
  if (status?.kind !== 'Status' || status.apiVersion !== 'v1' || status.status !== 'Failure') out.push(`a ${a.status} whose body is not a failure Status: ${a.body.toString('utf8').slice(0, 300)}`);
  if (status?.code !== a.status) out.push(`a ${a.status} whose Status says code ${status?.code}`);
  if (typeof status?.reason !== 'string' || !status.reason) out.push(`a ${a.status} whose Status has no reason`);
  if (typeof status?.message !== 'string' || !status.message.trim()) out.push(`a ${a.status} whose Status has no message`);
  return out;
}

/**
 * The 5xx answers the contract prescribes: 504 "Too large resource version" for a read at a
 * resourceVersion that does not arrive in time (SPEC Errors, with Retry-After), and 502/503 from
 * a proxy subresource whose backend cannot be reached (the fuzzed nodes, pods and services have
 * none). Both still carry a Status (checked like any error).
 */
function prescribed(r: FuzzRequest, a: Answer): boolean {
  const text = a.body.toString('utf8');
  if (a.status === 504) return text.includes('Too large resource version') || (r.method === 'HEAD' && /[?&]resourceVersion=/.test(r.path));
  if (a.status === 502 || a.status === 503) return /^[^?]*\/proxy(\/|\?|$)/.test(r.path);
  return false;
}

/** Methods that may write. */
export const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
