import type { coreV1, Secret } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { Strategy } from '../../strategy';
import { col, defaultStrategy, defineKind } from '../binding';
import { age } from '../table-cells';

export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.orch.io/token';
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'orch.io/service-account-token';
const SA_NAME_ANNOTATION = 'orch.io/service-account.name';
const MAX_SECRET_BYTES = 1024 * 1024;
const KEY_RE = /^[-._a-zA-Z0-9]+$/;

/** A secret's value for key, from data (base64) or stringData (plain). */
function value(s: Secret, key: string): string | undefined {
  if (s.stringData?.[key] !== undefined) return s.stringData[key];
  const b64 = s.data?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}

/** SPEC "Token secrets" rules, plus upstream's key and size rules for every secret. */
export function validateSecret(s: Secret): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [field, map] of [['data', s.data], ['stringData', s.stringData]] as const) {
    for (const [k, v] of Object.entries(map ?? {})) {
      if (!KEY_RE.test(k)) errs.push(FieldError.invalid(`${field}[${k}]`, k, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"));
      size += typeof v === 'string' ? v.length : 0;
    }
  }
  if (size > MAX_SECRET_BYTES) errs.push(FieldError.tooLong('data', '', MAX_SECRET_BYTES));
  if (s.type === SERVICE_ACCOUNT_TOKEN_TYPE && !s.metadata.annotations?.[SA_NAME_ANNOTATION]) {
    errs.push(FieldError.required(`metadata.annotations[${SA_NAME_ANNOTATION}]`, ''));
  }
  if (s.type === BOOTSTRAP_TOKEN_TYPE) {
    const id = value(s, 'token-id');
    const secret = value(s, 'token-secret');
    if (!id) errs.push(FieldError.required('data[token-id]', ''));
    else if (!/^[a-z0-9]{6}$/.test(id)) errs.push(FieldError.invalid('data[token-id]', id, 'must be 6 characters of [a-z0-9]'));
    if (!secret) errs.push(FieldError.required('data[token-secret]', ''));
    else if (!/^[a-z0-9]{16}$/.test(secret)) errs.push(FieldError.invalid('data[token-secret]', '<redacted>', 'must be 16 characters of [a-z0-9]'));
    if (id && s.metadata.name !== `bootstrap-token-${id}`) errs.push(FieldError.invalid('metadata.name', s.metadata.name, `must be bootstrap-token-${id}`));
    const exp = value(s, 'expiration');
    if (exp !== undefined && (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(exp) || Number.isNaN(Date.parse(exp)))) {
      errs.push(FieldError.invalid('data[expiration]', exp, 'must be an absolute UTC time in RFC 3339'));
    }
    for (const g of (value(s, 'auth-extra-groups') ?? '').split(',').filter(Boolean)) {
      if (!g.startsWith('system:bootstrappers:')) errs.push(FieldError.invalid('data[auth-extra-groups]', g, 'each group must start with system:bootstrappers:'));
    }
  }
  return errs;
}

/** Type Opaque unless set; stringData merged into data. */
function prepare(s: Secret): void {
  if (!s.type) s.type = 'Opaque';
  mergeStringData(s);
}

export const secretStrategy: Strategy<Secret> = {
  ...defaultStrategy,
  prepareForCreate: prepare,
  prepareForUpdate: prepare,
  validate: (s) => validateSecret(s),
  validateUpdate(s, o) {
    const errs = validateSecret(s);
    if (s.type !== o.type) errs.push(FieldError.invalid('type', s.type, 'field is immutable'));
    if (o.immutable && JSON.stringify(s.data ?? {}) !== JSON.stringify(o.data ?? {})) errs.push(FieldError.forbidden('data', 'field is immutable when `immutable` is set'));
    if (o.immutable && !s.immutable) errs.push(FieldError.forbidden('immutable', 'field is immutable when `immutable` is set'));
    return errs;
  },
};

/** stringData is write-only: merged into data (base64) before storing, as upstream. */
function mergeStringData(s: Secret): void {
  if (!s.stringData) return;
  s.data = { ...(s.data ?? {}) };
  for (const [k, v] of Object.entries(s.stringData)) s.data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  delete s.stringData;
}

/** core/v1 Secrets. */
export const secrets = defineKind<coreV1.Secret>({
  group: '',
  resource: 'secrets',
  strategy: secretStrategy,
  fields: ['type'],
  table: {
    columns: [col('Name'), col('Type'), col('Data', 'integer'), col('Age')],
    cells: (s) => [s.metadata.name, s.type ?? 'Opaque', Object.keys(s.data ?? {}).length, age(s.metadata.creationTimestamp)],
  },
});
