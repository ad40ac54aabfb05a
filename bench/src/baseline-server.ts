import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/**
 * The baseline of the gateway benchmarks: a bare Fastify HTTPS server (same TLS material,
 * same client-certificate request) answering the same JSON a gateway would, with no
 * registry, storage or authorization. argv: port certFile keyFile caFile listSize [listFile];
 * with listFile (a list the gateway answered, as JSON) the list is those objects, serialized
 * per request like any other body, else `listSize` objects like the ones the gets answer.
 */
async function main(): Promise<void> {
  const [port, certFile, keyFile, caFile, listSize, listFile] = process.argv.slice(2);
  const app = Fastify({
    https: { cert: readFileSync(certFile), key: readFileSync(keyFile), ca: readFileSync(caFile), requestCert: true, rejectUnauthorized: false },
    bodyLimit: 3 * 1024 * 1024,
    logger: false,
  });
  const object = (name: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'bench', uid: '2b7a2f5e-9f1e-4a8a-9c57-1f2d3e4f5a6b', resourceVersion: '1', creationTimestamp: '2026-11-21T00:00:00Z' },
    data: { key: 'value' },
  });
  const list = listFile
    ? (JSON.parse(readFileSync(listFile, 'utf8')) as object)
    : { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: Array.from({ length: Number(listSize) }, (_, i) => object(`cm-${i}`)) };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.get('/api/v1/namespaces/bench/configmaps/:name', async (req, reply) => {
    reply.header('content-type', 'application/json').send(JSON.stringify(object((req.params as { name: string }).name)));
  });
  app.get('/api/v1/namespaces/bench/configmaps', async (_req, reply) => {
    reply.header('content-type', 'application/json').send(JSON.stringify(list));
  });
  app.post('/api/v1/namespaces/bench/configmaps', async (req, reply) => {
    const obj = JSON.parse((req.body as Buffer).toString('utf8'));
    reply.code(201).header('content-type', 'application/json').send(JSON.stringify(obj));
  });
  await app.listen({ port: Number(port), host: '127.0.0.1' });
  process.stdout.write('ready\n');
}

void main();
