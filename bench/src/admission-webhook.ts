// A minimal HTTPS validating webhook that admits everything, run in a worker thread by the
// admission bench: its own event loop, so answering the gateway does not delay the bench's
// clients (a real webhook runs elsewhere). Counts its calls in shared memory.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface WebhookJob {
  keyPem: string;
  certPem: string;
  /** One Int32 slot: the number of calls answered. */
  calls: SharedArrayBuffer;
}

function serve(job: WebhookJob): void {
  const calls = new Int32Array(job.calls);
  const server = https.createServer({ key: job.keyPem, cert: job.certPem, keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Atomics.add(calls, 0, 1);
      const uid = (JSON.parse(Buffer.concat(chunks).toString()) as { request: { uid: string } }).request.uid;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } }));
    });
  });
  server.listen(0, '127.0.0.1', () => parentPort!.postMessage({ port: (server.address() as AddressInfo).port }));
}

if (parentPort) serve(workerData as WebhookJob);
