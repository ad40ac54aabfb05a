import type { IncomingMessage } from 'node:http';

/**
 * The whole body of a response from a server the gateway calls (webhook, aggregated API
 * server). More than `limit` bytes destroys the response: the promise rejects with
 * "the response is larger than <limit> bytes", as it does on any error of the response.
 */
export function readResponseBody(res: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) res.destroy(new Error(`the response is larger than ${limit} bytes`));
      else chunks.push(c);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });
}
