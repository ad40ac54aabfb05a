import { randomInt } from 'node:crypto';

// Name and label syntax checks, message for message as upstream
// k8s.io/apimachinery/pkg/util/validation and pkg/api/validation/path.
// Every check returns the list of problems; an empty list means valid.

const QNAME_CHAR_FMT = '[A-Za-z0-9]';
const QNAME_EXT_CHAR_FMT = '[-A-Za-z0-9_.]';
const QUALIFIED_NAME_FMT = `(${QNAME_CHAR_FMT}${QNAME_EXT_CHAR_FMT}*)?${QNAME_CHAR_FMT}`;
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';

/** Longest label value. */
export const LABEL_VALUE_MAX_LENGTH = 63;
/** Longest RFC 1123 label (and DNS-1035 label). */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Longest RFC 1123 subdomain. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** One of upstream's name syntaxes: the regex as its messages print it, the longest value, the message's examples, the message. */
interface NameSyntax {
  readonly fmt: string;
  readonly re: RegExp;
  readonly maxLength: number;
  readonly examples: readonly string[];
  readonly message: string;
}

function nameSyntax(fmt: string, maxLength: number, examples: readonly string[], message: string): NameSyntax {
  return { fmt, re: new RegExp(`^${fmt}$`), maxLength, examples, message };
}

const SYNTAX = {
  qualifiedName: nameSyntax(QUALIFIED_NAME_FMT, 63, ['MyName', 'my.name', '123-abc'], "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
  labelValue: nameSyntax(`(${QUALIFIED_NAME_FMT})?`, LABEL_VALUE_MAX_LENGTH, ['MyValue', 'my_value', '12345'], "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
  dns1123Label: nameSyntax(DNS1123_LABEL_FMT, DNS1123_LABEL_MAX_LENGTH, ['my-name', '123-abc'], "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"),
  dns1123Subdomain: nameSyntax(`${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`, DNS1123_SUBDOMAIN_MAX_LENGTH, ['example.com'], "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"),
  dns1035Label: nameSyntax('[a-z]([-a-z0-9]*[a-z0-9])?', 63, ['my-name', 'abc-123'], "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"),
};

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

function emptyError(): string {
  return 'must be non-empty';
}

/** upstream RegexError: `<msg> (e.g. 'a' or 'b', regex used for validation is '<fmt>')`. */
function regexError({ message, fmt, examples }: NameSyntax): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${fmt}')`;
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** Upstream's checks of a value under one syntax, in its order: the length, then the form. */
function syntaxErrors(value: string, syntax: NameSyntax): string[] {
  const errs: string[] = [];
  if (value.length > syntax.maxLength) errs.push(maxLenError(syntax.maxLength));
  if (!syntax.re.test(value)) errs.push(regexError(syntax));
  return errs;
}

/** upstream IsQualifiedName: `[prefix/]name`, prefix a DNS subdomain, name ≤ 63 alphanumerics plus `-_.`. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [`a qualified name ${regexError(SYNTAX.qualifiedName)} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  errs.push(...syntaxErrors(name, SYNTAX.qualifiedName).map((m) => `name part ${m}`));
  return errs;
}

/** upstream IsValidLabelValue: empty, or ≤ 63 alphanumerics plus `-_.` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  return syntaxErrors(value, SYNTAX.labelValue);
}

/** upstream IsDNS1123Label (≤ 63, lower-case alphanumerics and `-`). */
export function isDNS1123Label(value: string): string[] {
  const errs = syntaxErrors(value, SYNTAX.dns1123Label);
  // A valid subdomain that is not a valid label must contain dots: upstream says that instead of the form's message.
  if (!SYNTAX.dns1123Label.re.test(value) && SYNTAX.dns1123Subdomain.re.test(value)) errs.splice(-1, 1, 'must not contain dots');
  return errs;
}

/** upstream IsDNS1123Subdomain (≤ 253, dot-separated RFC 1123 labels). */
export function isDNS1123Subdomain(value: string): string[] {
  return syntaxErrors(value, SYNTAX.dns1123Subdomain);
}

/** upstream IsDNS1035Label (≤ 63, starts with a letter). */
export function isDNS1035Label(value: string): string[] {
  return syntaxErrors(value, SYNTAX.dns1035Label);
}

const NAME_MAY_NOT_BE = ['.', '..'];
const NAME_MAY_NOT_CONTAIN = ['/', '%'];

/** upstream IsValidPathSegmentName: a name usable as one URL path segment. */
export function isValidPathSegmentName(name: string): string[] {
  if (NAME_MAY_NOT_BE.includes(name)) return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

/** upstream IsValidPathSegmentPrefix: a generateName prefix usable in a path segment. */
export function isValidPathSegmentPrefix(name: string): string[] {
  return NAME_MAY_NOT_CONTAIN.filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/** upstream ValidatePathSegmentName: `prefix` checks a generateName prefix instead of a full name. */
export function validatePathSegmentName(name: string, prefix: boolean): string[] {
  return prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name);
}

/**
 * upstream maskTrailingDash: a generateName prefix may end in `-` because random
 * characters follow, so the dash is masked before checking the name syntax.
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** upstream NameIsDNSSubdomain (ValidateNameFunc); `prefix` validates a generateName. */
export function nameIsDNSSubdomain(name: string, prefix: boolean): string[] {
  return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
}

/** upstream NameIsDNSLabel (ValidateNameFunc); `prefix` validates a generateName. */
export function nameIsDNSLabel(name: string, prefix: boolean): string[] {
  return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
}

/** upstream NameIsDNS1035Label (ValidateNameFunc); `prefix` validates a generateName. */
export function nameIsDNS1035Label(name: string, prefix: boolean): string[] {
  return isDNS1035Label(prefix ? maskTrailingDash(name) : name);
}

/** Characters of generated name suffixes (upstream util/rand: no vowels, no confusable digits). */
export const GENERATED_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const GENERATED_SUFFIX_LENGTH = 5;
/** Longest base kept by generateName, so base + suffix ≤ 63 (upstream MaxGeneratedNameLength). */
export const MAX_GENERATED_NAME_LENGTH = 63 - GENERATED_SUFFIX_LENGTH;

/** upstream SimpleNameGenerator: base (cut to 58 chars) + 5 random characters. */
export function generateName(base: string): string {
  let suffix = '';
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++) suffix += GENERATED_NAME_ALPHABET[randomInt(GENERATED_NAME_ALPHABET.length)];
  return base.slice(0, MAX_GENERATED_NAME_LENGTH) + suffix;
}
