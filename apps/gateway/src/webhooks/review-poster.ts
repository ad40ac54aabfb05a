import { loadKubeconfig, type ReviewPoster } from '@orch/auth';
import type { WebhookClient } from './webhook-client';

/** Upstream's default request timeout of authentication and authorization webhooks. */
const REVIEW_TIMEOUT_MS = 30_000;

/**
 * The caller of an authentication or authorization webhook described by a kubeconfig-format
 * file (`--authentication-token-webhook-config-file`, `--authorization-webhook-config-file`):
 * the current context's cluster `server` is the webhook's URL, its CA verifies the webhook,
 * the user's client certificate or token authenticates the gateway to it. Calls go through
 * the gateway's one WebhookClient. Throws (start-up error) when the file cannot be used.
 */
export async function reviewPoster(client: WebhookClient, file: string, flag: string): Promise<ReviewPoster> {
  let creds: Awaited<ReturnType<typeof loadKubeconfig>>;
  try {
    creds = await loadKubeconfig(file);
  } catch (err) {
    throw new Error(`--${flag}: ${(err as Error).message}`);
  }
  if (!creds.server.startsWith('https://')) throw new Error(`--${flag}: the webhook server ${JSON.stringify(creds.server)} must be an https URL`);
  if (creds.insecureSkipTlsVerify) throw new Error(`--${flag}: insecure-skip-tls-verify is not accepted for webhooks`);
  const config = {
    url: creds.server,
    ...(creds.caPem ? { caBundle: Buffer.from(creds.caPem).toString('base64') } : {}),
    ...(creds.certPem && creds.keyPem ? { clientCertPem: creds.certPem, clientKeyPem: creds.keyPem } : {}),
    ...(creds.token ? { bearerToken: creds.token } : {}),
  };
  return (review) => client.post(config, review, REVIEW_TIMEOUT_MS);
}
