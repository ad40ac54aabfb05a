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
    return errs;
  },
  fieldAttributes: fieldsFrom(['spec.signerName']),
  subresources: { status: statusSubresource, approval: statusSubresource },
};
