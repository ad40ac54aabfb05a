import type { Pki } from '@orch/auth';
import type { GatewayOptions } from './options';

/** What the gateway process was started with: flags, the cluster PKI and the client CA bundle. */
export interface GatewayConfig {
  options: GatewayOptions;
  pki: Pki;
  /** PEM bundle of the CA(s) whose client certificates authenticate users. */
  clientCa: string;
}

/** Nest injection token of the GatewayConfig. */
export const GATEWAY_CONFIG = Symbol('GatewayConfig');
