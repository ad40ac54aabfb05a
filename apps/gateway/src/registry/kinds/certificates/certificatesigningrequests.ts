import type { certificatesV1 } from '@orch/api';
import { FieldError, humanDuration } from '@orch/apimachinery';
import type { Served, Strategy } from '../../strategy';
import { col, defaultStrategy, defineKind, part, statusSubresource } from '../binding';
import { age } from '../table-cells';

type Csr = Served<certificatesV1.CertificateSigningRequest>;

/**
 * CertificateSigningRequests: the requester's identity (spec.username, uid, groups, extra) is
 * set by the gateway from the authenticated user, never taken from the client, so approvers
 * can trust it (upstream csr strategy). spec is immutable after creation.
 */
export const csrStrategy: Strategy<Csr> = {
  ...defaultStrategy,
  prepareForCreate(csr, ctx) {
    const spec = { ...(csr.spec ?? ({} as certificatesV1.CertificateSigningRequestSpec)) };
    spec.username = ctx.user.username;
    if (ctx.user.uid) spec.uid = ctx.user.uid;
    else delete spec.uid;
    spec.groups = [...ctx.user.groups];
    if (ctx.user.extra && Object.keys(ctx.user.extra).length) spec.extra = ctx.user.extra;
    else delete spec.extra;
    csr.spec = spec;
    delete csr.status;
  },
  prepareForUpdate(csr, old) {
    csr.spec = old.spec;
  },
  validate(csr) {
    const spec = csr.spec ?? ({} as Partial<certificatesV1.CertificateSigningRequestSpec>);
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
};

/** Key usages a CSR may request (upstream certificates/v1 KeyUsage). */
const KNOWN_USAGES = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment',
  'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing',
  'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing',
  'microsoft sgc', 'netscape sgc',
];

/** SPEC Versioning 1.22 row: conditions unique by type; status.certificate holds CERTIFICATE PEM blocks only. */
function validateCsrStatus(csr: Csr): FieldError[] {
  const errs: FieldError[] = [];
  const status = csr.status ?? {};
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

/** certificatesigningrequests/status and /approval write status only: conditions unique, a certificate of CERTIFICATE blocks. */
const statusWrites = part<Csr>({ prepareForUpdate: statusSubresource.prepareForUpdate, validateUpdate: (csr) => validateCsrStatus(csr) });

/** certificates.orch.io/v1 CertificateSigningRequests. */
export const certificateSigningRequests = defineKind<certificatesV1.CertificateSigningRequest>({
  group: 'certificates.orch.io',
  resource: 'certificatesigningrequests',
  strategy: csrStrategy,
  fields: ['spec.signerName'],
  subresources: { approval: statusWrites, status: statusWrites },
  table: {
    columns: [col('Name'), col('Age'), col('SignerName'), col('Requestor'), col('RequestedDuration'), col('Condition')],
    cells: (c) => {
      const conds = (c.status?.conditions ?? []).map((x) => x.type);
      if (c.status?.certificate) conds.push('Issued');
      return [c.metadata.name, age(c.metadata.creationTimestamp), c.spec?.signerName ?? '', c.spec?.username ?? '', c.spec?.expirationSeconds ? humanDuration(c.spec.expirationSeconds * 1000) : '<none>', conds.length ? conds.join(',') : 'Pending'];
    },
  },
});
