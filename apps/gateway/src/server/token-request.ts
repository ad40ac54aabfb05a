import { FieldError, StatusError, type KubeObject } from '@orch/apimachinery';
import type { authenticationV1 } from '@orch/api';
import type { BoundObject, ServiceAccountTokenIssuer } from '@orch/auth';
import type { GenericStore } from '../registry/generic-store';
import type { RequestContext, Served } from '../registry/strategy';

/** upstream defaults: one hour, at least ten minutes. */
export const DEFAULT_TOKEN_SECONDS = 3600;
export const MIN_TOKEN_SECONDS = 600;
/** Tokens never outlive this (upstream --service-account-max-token-expiration default: none; a day keeps leaks short). */
export const MAX_TOKEN_SECONDS = 48 * 3600;

/** A TokenRequest as decoded: any spec field may be absent or null. */
type TokenRequest = Served<{ spec?: { [F in keyof authenticationV1.TokenRequestSpec]?: authenticationV1.TokenRequestSpec[F] | null } }>;

const invalid = (name: string, errs: FieldError[]) => StatusError.invalid('TokenRequest', 'authentication.orch.io', name, errs);

/**
 * `serviceaccounts/<name>/token` (TokenRequest, `kubectl create token`): a bound token for an
 * existing account, for `spec.audiences` (default the API audiences), living
 * `spec.expirationSeconds` (default 1 h, at least 10 min), bound to a Pod or Secret of the
 * namespace when `boundObjectRef` names one (its uid must match when given; a pod's node is
 * recorded). The token is invalid once the account or the bound object is gone
 * (service-account lookup). dryRun returns the request without a token.
 */
export async function createToken(
  deps: { issuer: ServiceAccountTokenIssuer; apiAudiences: string[]; registry: (resource: string) => GenericStore },
  namespace: string,
  accountName: string,
  request: TokenRequest,
  ctx: RequestContext,
): Promise<KubeObject> {
  const spec = request.spec ?? {};
  const errs: FieldError[] = [];
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_TOKEN_SECONDS;
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_TOKEN_SECONDS) errs.push(FieldError.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'));
  if (expirationSeconds > 2 ** 32) errs.push(FieldError.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
  const audiences = spec.audiences?.length ? spec.audiences : deps.apiAudiences;
  const ref = spec.boundObjectRef;
  if (ref && ref.kind !== 'Pod' && ref.kind !== 'Secret') errs.push(FieldError.notSupported('spec.boundObjectRef.kind', ref.kind, ['Pod', 'Secret']));
  if (ref && !ref.name) errs.push(FieldError.required('spec.boundObjectRef.name', ''));
  if (errs.length) throw invalid(accountName, errs);

  const account = await deps.registry('serviceaccounts').get(namespace, accountName);
  if (account.metadata.deletionTimestamp) throw StatusError.notFound({ group: '', resource: 'serviceaccounts' }, accountName);
  let bound: BoundObject | undefined;
  let nodeName: string | undefined;
  if (ref) {
    const resource = ref.kind === 'Pod' ? 'pods' : 'secrets';
    let obj: KubeObject;
    try {
      obj = await deps.registry(resource).get(namespace, ref.name!);
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) throw invalid(accountName, [FieldError.invalid('spec.boundObjectRef.name', ref.name, `${ref.kind} ${namespace}/${ref.name} not found`)]);
      throw err;
    }
    if (ref.uid && ref.uid !== obj.metadata.uid) throw StatusError.conflict({ group: '', resource }, ref.name!, `the UID in the bound object reference (${ref.uid}) does not match the UID in record (${obj.metadata.uid})`);
    if (obj.metadata.deletionTimestamp) throw invalid(accountName, [FieldError.invalid('spec.boundObjectRef', ref.name, 'the bound object is being deleted')]);
    bound = { kind: ref.kind as 'Pod' | 'Secret', name: ref.name!, uid: obj.metadata.uid! };
    if (ref.kind === 'Pod') {
      const pod = obj as KubeObject & { spec?: { nodeName?: string; serviceAccountName?: string } };
      if ((pod.spec?.serviceAccountName || 'default') !== accountName) {
        throw invalid(accountName, [FieldError.invalid('spec.boundObjectRef.name', ref.name, `the pod runs as service account ${JSON.stringify(pod.spec?.serviceAccountName || 'default')}`)]);
      }
      nodeName = pod.spec?.nodeName || undefined;
    }
  }
  const out: KubeObject = {
    // The group spelling the client used (typed clients know only authentication.k8s.io).
    apiVersion: request.apiVersion || 'authentication.orch.io/v1',
    kind: 'TokenRequest',
    metadata: { name: accountName, namespace, creationTimestamp: null as unknown as string },
    spec: { audiences, expirationSeconds, boundObjectRef: ref ? { ...ref, uid: bound?.uid } : null },
  } as KubeObject;
  if (ctx.dryRun) return { ...out, status: { token: '', expirationTimestamp: null } } as KubeObject;
  const { token, expiresAt } = await deps.issuer.issue({
    namespace,
    serviceAccountName: accountName,
    serviceAccountUid: account.metadata.uid!,
    audiences,
    expirationSeconds: Math.min(expirationSeconds, MAX_TOKEN_SECONDS),
    boundObject: bound,
    nodeName,
  });
  return { ...out, status: { token, expirationTimestamp: expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z') } } as KubeObject;
}
