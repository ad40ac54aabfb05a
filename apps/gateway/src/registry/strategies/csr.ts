import { FieldError } from '@orch/apimachinery';
import type { KubeObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { fieldsFrom, statusSubresource } from './common';

interface CsrLike extends KubeObject {
  spec?: { signerName?: string; usages?: string[]; request?: string; username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  status?: unknown;
}

/**
 * CertificateSigningRequests: the requester's identity (spec.username, uid, groups, extra) is
 * set by the gateway from the authenticated user, never taken from the client, so approvers
 * can trust it (upstream csr strategy). spec is immutable after creation.
 */
export const csrStrategy: Strategy = {
  nameRule: 'dns1123Subdomain',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate(obj, ctx) {
    const csr = obj as CsrLike;
    const spec = { ...(csr.spec ?? {}) };
    spec.username = ctx.user.username;
    if (ctx.user.uid) spec.uid = ctx.user.uid;
    else delete spec.uid;
    spec.groups = [...ctx.user.groups];
    if (ctx.user.extra && Object.keys(ctx.user.extra).length) spec.extra = ctx.user.extra;
    else delete spec.extra;
    csr.spec = spec;
    delete csr.status;
  },
  prepareForUpdate(obj, old) {
    (obj as CsrLike).spec = (old as CsrLike).spec;
  },
  validate(obj) {
    const spec = (obj as CsrLike).spec ?? {};
    const errs: FieldError[] = [];
    if (!spec.request) errs.push(FieldError.required('spec.request', ''));
    if (!spec.signerName) errs.push(FieldError.required('spec.signerName', ''));
    else if (spec.signerName === 'orch.io/legacy-unknown') errs.push(FieldError.invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
    if (!Array.isArray(spec.usages) || spec.usages.length === 0) errs.push(FieldError.required('spec.usages', ''));
    else
      spec.usages.forEach((u, i) => {
        if (!KNOWN_USAGES.includes(u)) errs.push(FieldError.notSupported(`spec.usages[${i}]`, u, KNOWN_USAGES));
        else if (spec.usages!.indexOf(u) !== i) errs.push(FieldError.duplicate(`spec.usages[${i}]`, u));
      });
    return errs;
  },
  fieldAttributes: fieldsFrom(['spec.signerName']),
  subresources: {
    status: { prepareForUpdate: statusSubresource.prepareForUpdate, validateUpdate: (obj) => validateCsrStatus(obj as CsrLike) },
    approval: { prepareForUpdate: statusSubresource.prepareForUpdate, validateUpdate: (obj) => validateCsrStatus(obj as CsrLike) },
  },
};

/** Key usages a CSR may request (upstream certificates/v1 KeyUsage). */
const KNOWN_USAGES = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment',
  'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing',
  'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing',
  'microsoft sgc', 'netscape sgc',
];

/** SPEC Versioning 1.22 row: conditions unique by type; status.certificate holds CERTIFICATE PEM blocks only. */
function validateCsrStatus(csr: CsrLike): FieldError[] {
  const errs: FieldError[] = [];
  const status = (csr.status ?? {}) as { conditions?: { type?: string }[]; certificate?: string };
  const seen = new Set<string>();
  (status.conditions ?? []).forEach((c, i) => {
    if (!c.type) errs.push(FieldError.required(`status.conditions[${i}].type`, ''));
    else if (seen.has(c.type)) errs.push(FieldError.duplicate(`status.conditions[${i}].type`, c.type));
    seen.add(c.type ?? '');
  });
  if (seen.has('Approved') && seen.has('Denied')) errs.push(FieldError.invalid('status.conditions', 'Approved, Denied', 'Approved and Denied conditions are mutually exclusive'));
  if (status.certificate) {
    const pem = Buffer.from(status.certificate, 'base64').toString('utf8');
    const blocks = [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----/g)].map((m) => m[1]);
    if (blocks.length === 0 || blocks.some((b) => b !== 'CERTIFICATE')) errs.push(FieldError.invalid('status.certificate', '<certificate data>', 'must contain one or more PEM-encoded CERTIFICATE blocks and nothing else'));
  }
  return errs;
}
