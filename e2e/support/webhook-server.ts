import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedServingCert } from '@orch/auth';

/** What a test webhook handler receives: the AdmissionReview request (and the review's apiVersion). */
export interface ReviewRequest {
  /** apiVersion of the AdmissionReview that carried the request (the server answers in it). */
  reviewApiVersion: string;
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  requestKind: { group: string; version: string; kind: string };
  requestResource: { group: string; version: string; resource: string };
  operation: string;
  namespace?: string;
  name: string;
  dryRun: boolean;
  object?: { metadata: { name?: string; labels?: Record<string, string> } } & Record<string, unknown>;
  oldObject?: unknown;
  userInfo: { username: string; groups: string[] };
}

/** What a handler answers: the AdmissionReview response fields (uid is filled in), or 'hang' to never answer. */
export type ReviewAnswer = { allowed: boolean; status?: { code?: number; message?: string; reason?: string }; patch?: unknown[]; warnings?: string[]; /** Answer for another request. */ uid?: string } | 'hang';

export interface WebhookServer {
  port: number;
  /** Base64 PEM of the CA that signed the server's certificate (a webhook's caBundle). */
  caBundle: string;
  /** `https://127.0.0.1:<port><path>`. */
  url(path: string): string;
  /** Requests received per path, in order. */
  calls: Map<string, ReviewRequest[]>;
  stop(): Promise<void>;
}

/**
 * A real HTTPS admission webhook server with its own CA (certificate for 127.0.0.1, localhost
 * and `hosts`), answering AdmissionReviews (in the version asked) per path with `handlers[path]`.
 */
export async function startWebhookServer(handlers: Record<string, (req: ReviewRequest) => ReviewAnswer>, hosts: string[] = []): Promise<WebhookServer> {
  const tls = await selfSignedServingCert(['127.0.0.1', 'localhost', ...hosts], 'test-webhook');
  const calls = new Map<string, ReviewRequest[]>();
  const hanging = new Set<import('node:http').ServerResponse>();
  const server = https.createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; request: ReviewRequest };
      review.request.reviewApiVersion = review.apiVersion;
      const list = calls.get(path) ?? [];
      list.push(review.request);
      calls.set(path, list);
      const handler = handlers[path];
      const answer = handler ? handler(review.request) : { allowed: true };
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const response: Record<string, unknown> = { uid: answer.uid ?? review.request.uid, allowed: answer.allowed };
      if (answer.status) response.status = answer.status;
      if (answer.warnings) response.warnings = answer.warnings;
      if (answer.patch) {
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(JSON.stringify(answer.patch)).toString('base64');
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    caBundle: Buffer.from(tls.caPem).toString('base64'),
    url: (path) => `https://127.0.0.1:${port}${path}`,
    calls,
    async stop() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
