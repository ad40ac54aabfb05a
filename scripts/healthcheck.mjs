#!/usr/bin/env node
// Container health check: exits 0 when GET <url> (default the gateway's /readyz) answers 200.
// Self-signed serving certificates are accepted: this only asks "are you up?".
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';

const url = process.argv[2] || process.env.ORCH_HEALTH_URL || 'https://127.0.0.1:6443/readyz';
const get = url.startsWith('https:') ? httpsGet : httpGet;
const req = get(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', () => process.exit(1));
