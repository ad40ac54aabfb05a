import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProtobufError, encodeProtobuf, encodeWatchEventProtobuf, hasProtobufSchema, type Catalog, type ResourceDef } from '@orch/api';
import { FieldError, StatusError, encodeYaml, managerFromUserAgent, negotiate, validateFieldManager, type DeleteOptions, type KubeObject } from '@orch/apimachinery';
import { anonymousUser, authRequestFromIncoming, type Authenticator, type UserInfo } from '@orch/auth';
import type { HealthChecks, HttpRequestMetrics } from '@orch/server-common';
import { renderMetrics } from '@orch/server-common';
import type { Registry as PromRegistry } from 'prom-client';
import { StorageFullError } from '@orch/storage';
import { Discovery, VERSION_INFO } from '../discovery/discovery';
import type { GenericStore, ListOptions, WatchEventOut } from '../registry/generic-store';
import type { RequestContext } from '../registry/strategy';
import { metadataTypeErrors } from '../registry/metadata-validation';
import { parseRequestInfo, type RequestInfo } from '../request/request-info';
import { APPLY_PATCH_YAML, decodeBody } from './body';
import { applyConfiguration, patchContentType, patchFunction } from './patch';
import { parseFieldValidation, validateFields } from './field-validation';
import { OpenApiV3 } from '../openapi/service';
import { chooseRepresentation, errorRepresentation, toTable, type Representation } from './representation';
import type { SubresourceHandlers } from './subresources';
import type { VirtualResources } from './virtual';

const gzipAsync = promisify(gzip);

export interface ApiHandlerDeps {
  catalog: Catalog;
  registries: Map<ResourceDef, GenericStore>;
  discovery: Discovery;
  health: HealthChecks;
  metricsRegistry: PromRegistry;
  requestMetrics: HttpRequestMetrics;
  authenticator: Authenticator;
  subresources: SubresourceHandlers;
  virtual: VirtualResources;
  options: {
    anonymousAuth: boolean;
    /** Watches end after this long unless timeoutSeconds says otherwise (randomized up to 2x). */
    minRequestTimeoutSeconds: number;
    compression: boolean;
    /** Serve `*.k8s.io` group paths as aliases of `*.orch.io` (compatibility option). */
    k8sAliases: boolean;
  };
}

/** Paths anyone may read, authenticated or not (upstream system:public-info-viewer). */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

const ANONYMOUS: UserInfo = anonymousUser();

/**
 * The gateway's request path (ARCHITECTURE §3, STYLE 4), in one place:
 * request-info → authentication → authorization → routing → decode → registry → encode.
 */
export class ApiHandler {
  /** Open watch streams, ended by closeAllWatches() on shutdown. */
  private readonly watches = new Set<() => void>();

  /** OpenAPI v3 documents of the catalog (`/openapi/v3`). */
  private readonly openapi: OpenApiV3;

  constructor(private readonly deps: ApiHandlerDeps) {
    this.openapi = new OpenApiV3(deps.catalog);
  }

  /** Ends every open watch stream cleanly (graceful shutdown). */
  closeAllWatches(): void {
    for (const finish of [...this.watches]) finish();
  }

  /** Fastify handler for every path. Never throws: errors become Status responses. */
  async handle(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const started = process.hrtime.bigint();
    const url = req.url;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const info = parseRequestInfo(req.method, path, query);
    let code = 500;
    try {
      const user = await this.authenticate(req, info);
      this.authorize(user, info);
      code = await this.route(req, reply, info, query, user);
    } catch (err) {
      code = await this.sendError(req, reply, err);
    } finally {
      this.observe(info, code, started);
    }
  }

  // ---------------------------------------------------------------- authn / authz

  private async authenticate(req: FastifyRequest, info: RequestInfo): Promise<UserInfo> {
    const user = await this.deps.authenticator.authenticate(authRequestFromIncoming(req.raw));
    if (user) return user;
    if (!this.deps.options.anonymousAuth && !PUBLIC_PATHS.has(info.path)) throw StatusError.unauthorized();
    return ANONYMOUS;
  }

  /**
   * Until the authorization issue lands: authenticated users may do anything; anonymous
   * users may read health and version only (default deny for them).
   */
  private authorize(user: UserInfo, info: RequestInfo): void {
    if (user.username !== ANONYMOUS.username) return;
    if (!info.isResourceRequest && PUBLIC_PATHS.has(info.path) && (info.verb === 'get' || info.verb === 'head')) return;
    if (isHealthPath(info.path) && info.verb === 'get') return;
    if (isClusterInfoRead(info)) return;
    if (info.isResourceRequest) {
      throw StatusError.forbidden(
        { group: info.apiGroup, resource: info.resource },
        info.name,
        `User "${user.username}" cannot ${info.verb} resource "${info.resource}" in API group "${info.apiGroup}"${info.namespace ? ` in the namespace "${info.namespace}"` : ' at the cluster scope'}`,
      );
    }
    throw StatusError.forbidden(undefined, '', `User "${user.username}" cannot ${info.verb} path "${info.path}"`);
  }

  // ---------------------------------------------------------------- routing

  private async route(req: FastifyRequest, reply: FastifyReply, info: RequestInfo, query: URLSearchParams, user: UserInfo): Promise<number> {
    if (!info.isResourceRequest) return this.nonResource(req, reply, info, query);
    const def = this.deps.catalog.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!def || (!this.deps.options.k8sAliases && info.apiGroup.endsWith('.k8s.io'))) {
      throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    }
    if (info.namespace && def.scope === 'Cluster' && def.resource !== 'namespaces') {
      throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    }
    const ctx: RequestContext = {
      user,
      namespace: info.namespace,
      dryRun: parseDryRun(query),
      // Writes without fieldManager are recorded for the User-Agent's product (upstream).
      fieldManager: query.get('fieldManager') || managerFromUserAgent(req.headers['user-agent']),
      warnings: [],
      ifMatchResourceVersion: parseIfMatch(req.headers['if-match']),
    };
    const repr = chooseRepresentation(req.headers.accept, info.verb === 'watch', hasProtobufSchema(def.group, def.version, def.kind));
    const respond = (status: number, body: unknown) => {
      if (ctx.warnings.length) reply.header('warning', ctx.warnings.map((w) => `299 - ${JSON.stringify(w)}`));
      return this.send(req, reply, status, inRequestedGroup(body, def.group, info.apiGroup), repr, query, def);
    };

    if (info.subresource) {
      return this.deps.subresources.handle({ req, reply, info, def, ctx, query, respond, registries: this.deps.registries });
    }
    if (def.virtual) return this.deps.virtual.handle({ req, info, def, ctx, query, respond });

    const verb = info.verb as string;
    if (!def.verbs.includes(verb as never)) {
      throw StatusError.methodNotSupported({ group: def.group, resource: def.resource }, verb);
    }
    const registry = this.deps.registries.get(def)!;
    const ns = def.scope === 'Namespaced' ? info.namespace : '';
    switch (verb) {
      case 'get':
        return respond(200, await registry.get(ns, info.name, query.get('resourceVersion') ?? undefined));
      case 'list': {
        const opts = listOptions(query);
        if (repr.kind === 'json' && !query.has('pretty')) {
          const json = await registry.listJson(ns, opts);
          if (json !== undefined) return this.sendText(req, reply, 200, json, repr.contentType);
        }
        return respond(200, await registry.list(ns, opts));
      }
      case 'watch':
        return this.watch(req, reply, registry, ns, info, query, repr);
      case 'create': {
        checkWriteOptions('CreateOptions', query);
        const obj = this.decodeObject(req, def, ctx, query);
        const { object } = await registry.create(ns, obj, ctx);
        return respond(201, object);
      }
      case 'update': {
        checkWriteOptions('UpdateOptions', query);
        const obj = this.decodeObject(req, def, ctx, query);
        const res = await registry.update(ns, info.name, obj, ctx);
        return respond(res.created ? 201 : 200, res.object);
      }
      case 'patch': {
        const apply = patchContentType(req) === APPLY_PATCH_YAML;
        checkWriteOptions('PatchOptions', query, apply);
        if (apply) {
          const config = applyConfiguration(req, def, parseFieldValidation(query), ctx.warnings);
          const res = await registry.apply(ns, info.name, config, parseBool(query.get('force')), ctx);
          return respond(res.created ? 201 : 200, res.object);
        }
        const patchFn = patchFunction(req, def, parseFieldValidation(query), ctx.warnings);
        const res = await registry.patch(ns, info.name, patchFn, ctx);
        return respond(200, res.object);
      }
      case 'delete': {
        const options = deleteOptions(req, query);
        const res = await registry.delete(ns, info.name, options, ctx);
        if (!res.deleted || def.resource === 'pods') {
          return respond(options.orphanDependents === false && !res.deleted ? 202 : 200, res.object);
        }
        return respond(200, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: { name: info.name, group: def.group, kind: def.resource, uid: res.object.metadata.uid },
        });
      }
      case 'deletecollection':
        return respond(200, await registry.deleteCollection(ns, listOptions(query), deleteOptions(req, query), ctx));
      default:
        throw StatusError.methodNotSupported({ group: def.group, resource: def.resource }, verb);
    }
  }

  private async nonResource(req: FastifyRequest, reply: FastifyReply, info: RequestInfo, query: URLSearchParams): Promise<number> {
    const path = info.path.length > 1 && info.path.endsWith('/') ? info.path.slice(0, -1) : info.path;
    if (isHealthPath(path)) {
      const res = await this.deps.health.handle(path, query);
      reply.code(res.status).header('content-type', res.contentType).header('x-content-type-options', 'nosniff').send(res.body);
      return res.status;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw StatusError.methodNotSupported({ group: '', resource: path }, req.method.toLowerCase());
    }
    if (path === '/metrics') {
      const m = await renderMetrics(this.deps.metricsRegistry);
      reply.code(200).header('content-type', m.contentType).send(m.body);
      return 200;
    }
    const plain = (body: unknown, contentType = 'application/json') => {
      const text = query.has('pretty') ? JSON.stringify(body, null, 2) : JSON.stringify(body);
      reply.code(200).header('content-type', contentType).send(Buffer.from(text));
      return 200;
    };
    const d = this.deps.discovery;
    if (path === '/version') return plain(VERSION_INFO);
    if (path === '/api' || path === '/apis') {
      const repr = negotiate(req.headers.accept, { encodings: ['json'], discovery: true });
      if (repr.kind === 'discovery') return plain(d.aggregated(path === '/api', repr.version as 'v2' | 'v2beta1'), repr.contentType);
      return plain(path === '/api' ? d.apiVersions() : d.apiGroupList());
    }
    if (info.apiPrefix === 'api' && info.apiVersion) {
      const list = d.apiResourceList('', info.apiVersion);
      if (list) return plain(list);
    }
    if (info.apiPrefix === 'apis') {
      const parts = path.split('/').filter(Boolean);
      if (parts.length === 2) {
        const g = d.apiGroup(this.aliasGroup(parts[1]));
        if (g) return plain(g);
      } else if (parts.length === 3) {
        const list = d.apiResourceList(this.aliasGroup(parts[1]), parts[2]);
        if (list) return plain(list);
      }
    }
    // /openapi/v2 is not served: kubectl falls back to v3 on its 404.
    const openapi = this.openapi.serve(path, query, { accept: req.headers.accept, ifNoneMatch: req.headers['if-none-match'] });
    if (openapi) {
      reply.code(openapi.status).headers(openapi.headers).send(openapi.body);
      return openapi.status;
    }
    throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
  }

  private aliasGroup(group: string): string {
    return this.deps.options.k8sAliases || !group.endsWith('.k8s.io') ? group : `\u0000${group}`;
  }

  // ---------------------------------------------------------------- watch

  private async watch(
    req: FastifyRequest,
    reply: FastifyReply,
    registry: GenericStore,
    ns: string,
    info: RequestInfo,
    query: URLSearchParams,
    repr: Representation,
  ): Promise<number> {
    const opts = listOptions(query);
    // GET .../<name>?watch=1 watches one object.
    const fieldSelector = info.name ? [opts.fieldSelector, `metadata.name=${info.name}`].filter(Boolean).join(',') : opts.fieldSelector;
    const timeoutParam = query.get('timeoutSeconds');
    let timeoutSeconds: number;
    if (timeoutParam !== null) {
      timeoutSeconds = Number(timeoutParam);
      if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0) throw StatusError.badRequest(`invalid timeoutSeconds: ${JSON.stringify(timeoutParam)}`);
    } else {
      const min = this.deps.options.minRequestTimeoutSeconds;
      timeoutSeconds = Math.floor(min * (1 + Math.random()));
    }
    const res = reply.raw;
    let headersSent = false;
    let firstTable = true;
    let closed = false;
    const writeHeaders = () => {
      if (headersSent) return;
      headersSent = true;
      reply.hijack();
      res.writeHead(200, {
        // Protobuf watches are length-prefixed WatchEvent frames (upstream stream=watch).
        'content-type': repr.kind === 'protobuf' ? `${repr.contentType};stream=watch` : 'application/json',
        'transfer-encoding': 'chunked',
        'cache-control': 'no-cache, private',
      });
      res.flushHeaders();
    };
    const encodeEvent = (event: WatchEventOut): string | Buffer => {
      const ev = { type: event.type, object: inRequestedGroup(event.object, registry.def.group, info.apiGroup) as WatchEventOut['object'] };
      if (repr.kind === 'protobuf') return encodeWatchEventProtobuf(ev.type, ev.object);
      if (repr.kind === 'table' && ev.type !== 'BOOKMARK' && ev.type !== 'ERROR') {
        const table = toTable(ev.object as KubeObject, registry.def, repr, !firstTable);
        firstTable = false;
        return JSON.stringify({ type: ev.type, object: table }) + '\n';
      }
      return JSON.stringify(ev) + '\n';
    };
    const handle = await registry.watch(
      ns,
      {
        labelSelector: opts.labelSelector,
        fieldSelector,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
        allowWatchBookmarks: query.get('allowWatchBookmarks') === 'true' || query.get('allowWatchBookmarks') === '1',
        sendInitialEvents: query.has('sendInitialEvents') ? query.get('sendInitialEvents') === 'true' : undefined,
      },
      {
        send: (ev) => {
          if (closed) return;
          writeHeaders();
          let chunk: string | Buffer;
          try {
            chunk = encodeEvent(ev);
          } catch (err) {
            // An object that cannot be encoded ends the stream; the client re-watches.
            req.log.error({ err }, 'watch event encoding failed');
            finish();
            return;
          }
          const ok = res.write(chunk);
          // A watcher that cannot keep up is cut off; its client re-watches from its last RV.
          if (!ok && res.writableLength > 64 * 1024 * 1024) finish();
        },
        end: () => finish(),
      },
    );
    writeHeaders();
    const timer = setTimeout(() => handle.stop(), timeoutSeconds * 1000);
    timer.unref?.();
    const watches = this.watches;
    function finish() {
      if (closed) return;
      closed = true;
      watches.delete(finish);
      clearTimeout(timer);
      handle?.stop();
      res.end();
    }
    watches.add(finish);
    res.on('close', () => {
      if (!closed) {
        closed = true;
        watches.delete(finish);
        clearTimeout(timer);
        handle.stop();
      }
    });
    return 200;
  }

  // ---------------------------------------------------------------- decoding

  private decodeObject(req: FastifyRequest, def: ResourceDef, ctx: RequestContext, query: URLSearchParams): KubeObject {
    const { value, duplicates } = decodeBody(req.body as Buffer | undefined, req.headers['content-type']);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw StatusError.badRequest(`the body of the request must be a ${def.kind} object`);
    }
    const obj = value as KubeObject;
    checkTypeFields(obj, def);
    if (obj.metadata !== undefined && obj.metadata !== null) {
      if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
        throw StatusError.badRequest(`json: cannot unmarshal ${Array.isArray(obj.metadata) ? 'array' : typeof obj.metadata} into Go struct field ${def.kind}.metadata of type v1.ObjectMeta`);
      }
      const typeErrs = metadataTypeErrors(obj.metadata);
      if (typeErrs.length) throw StatusError.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${typeErrs.map((e) => e.toString()).join(', ')}`);
    }
    validateFields(obj, def, duplicates, parseFieldValidation(query), ctx.warnings);
    return obj;
  }

  // ---------------------------------------------------------------- encoding

  /** Writes a body in the negotiated representation (JSON, YAML, Table, protobuf), gzip when asked. */
  async send(req: FastifyRequest, reply: FastifyReply, status: number, body: unknown, repr: Representation, query: URLSearchParams, def?: ResourceDef): Promise<number> {
    let text: string | Buffer;
    let contentType: string;
    const pretty = query.has('pretty') && query.get('pretty') !== 'false';
    const protobuf = repr.kind === 'protobuf' ? encodeProtobufBody(body, req.headers.accept) : undefined;
    if (protobuf) {
      text = protobuf;
      contentType = repr.contentType;
    } else if (repr.kind === 'table' && def && isObjectOrList(body)) {
      const table = toTable(body as KubeObject, def, repr, false, query.get('includeObject') ?? undefined);
      text = repr.encoding === 'yaml' ? encodeYaml(table) : JSON.stringify(table, null, pretty ? 2 : undefined);
      contentType = repr.contentType;
    } else if (repr.kind === 'yaml') {
      text = encodeYaml(body);
      contentType = 'application/yaml';
    } else {
      text = pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body);
      contentType = 'application/json';
    }
    return this.sendText(req, reply, status, text, contentType);
  }

  /** Writes an encoded body, gzip when the client asks and the gate allows. */
  private async sendText(req: FastifyRequest, reply: FastifyReply, status: number, text: string | Buffer, contentType: string): Promise<number> {
    reply.code(status).header('content-type', contentType);
    if (this.deps.options.compression && acceptsGzip(req.headers['accept-encoding']) && text.length > 0) {
      const zipped = await gzipAsync(text);
      reply.header('content-encoding', 'gzip').header('vary', 'Accept-Encoding').send(zipped);
    } else {
      reply.send(typeof text === 'string' ? Buffer.from(text) : text);
    }
    return status;
  }

  private async sendError(req: FastifyRequest, reply: FastifyReply, err: unknown): Promise<number> {
    const se = toStatusError(err);
    if (se.code >= 500) req.log.error({ err }, 'request failed');
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.end();
      return se.code;
    }
    for (const [k, v] of Object.entries(se.headers)) reply.header(k, v);
    const accept = req.headers.accept;
    if (errorRepresentation(accept) === 'protobuf') {
      const contentType = negotiate(accept, { encodings: ['protobuf'] }).contentType;
      reply.code(se.code).header('content-type', contentType).send(encodeProtobuf(se.toStatus()));
      return se.code;
    }
    reply.code(se.code).header('content-type', 'application/json').send(Buffer.from(JSON.stringify(se.toStatus())));
    return se.code;
  }

  private observe(info: RequestInfo, code: number, started: bigint): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const labels = {
      verb: String(info.verb).toUpperCase() === info.verb ? info.verb : String(info.verb).toUpperCase(),
      group: info.apiGroup,
      version: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      scope: !info.isResourceRequest ? '' : info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster',
      component: 'apiserver',
    };
    if (info.verb === 'watch') this.deps.requestMetrics.total.inc({ ...labels, code: String(code) });
    else this.deps.requestMetrics.observe(labels, code, seconds);
  }
}

/** Maps anything thrown in the request path to a StatusError (500 for the unexpected). */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  if (err instanceof StorageFullError) return StatusError.insufficientStorage(err.message);
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return StatusError.tooLarge(3 * 1024 * 1024);
  if (e?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return StatusError.unsupportedMediaType('', ['application/json', 'application/yaml']);
  if (e?.statusCode && e.statusCode >= 400 && e.statusCode < 500) return StatusError.badRequest(e.message ?? 'bad request');
  return StatusError.internal(e?.message ?? String(err));
}

/**
 * Reading the signed cluster-info config map is open to anyone: joining nodes fetch it before
 * they have credentials (upstream grants get on it to system:unauthenticated).
 */
function isClusterInfoRead(info: RequestInfo): boolean {
  return info.isResourceRequest && info.verb === 'get' && info.apiGroup === '' && info.resource === 'configmaps' && info.namespace === 'orch-public' && info.name === 'cluster-info' && !info.subresource;
}

function isHealthPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/[^/]+)?\/?$/.test(path);
}

/**
 * A response to a `*.k8s.io` alias path names the group the client asked for (typed clients
 * reject an apiVersion their scheme does not know): the apiVersion of the object, or of a
 * list and its items, is rewritten from the served group. Other bodies are returned as they are.
 */
function inRequestedGroup(body: unknown, servedGroup: string, requestedGroup: string): unknown {
  if (servedGroup === requestedGroup || !requestedGroup.endsWith('.k8s.io') || typeof body !== 'object' || body === null) return body;
  const from = `${servedGroup}/`;
  const rewrite = (o: unknown): unknown => {
    const apiVersion = (o as { apiVersion?: unknown })?.apiVersion;
    return typeof apiVersion === 'string' && apiVersion.startsWith(from) ? { ...(o as object), apiVersion: `${requestedGroup}/${apiVersion.slice(from.length)}` } : o;
  };
  const out = rewrite(body) as { items?: unknown };
  return Array.isArray(out.items) ? { ...out, items: out.items.map(rewrite) } : out;
}

/**
 * A response body in protobuf, or undefined to answer JSON instead: a body without a
 * protobuf form (no built-in kind) falls back to JSON when the client accepts it (406 otherwise).
 */
function encodeProtobufBody(body: unknown, accept: string | undefined): Buffer | undefined {
  try {
    return encodeProtobuf(body as object);
  } catch (err) {
    if (!(err instanceof ProtobufError)) throw err;
    if (errorRepresentation(accept) === 'json') return undefined;
    throw StatusError.notAcceptable(['application/json', 'application/yaml']);
  }
}

function isObjectOrList(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { kind?: string }).kind !== 'Status';
}

function acceptsGzip(header: string | undefined): boolean {
  return !!header && header.split(',').some((p) => p.trim().split(';')[0] === 'gzip');
}

/**
 * `If-Match` (SPEC Media types): a resourceVersion, quoted like an ETag or bare; `*` only
 * requires the object to exist. Several values are not supported (400).
 */
export function parseIfMatch(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const raw = (Array.isArray(header) ? header.join(',') : header).trim();
  if (raw === '*') return '*';
  if (raw.includes(',')) throw StatusError.badRequest('If-Match with several entity tags is not supported: give one resourceVersion');
  const m = /^(?:W\/)?"?([^"]*)"?$/.exec(raw);
  if (!m || !/^\d+$/.test(m[1])) throw StatusError.badRequest(`If-Match must carry a resourceVersion, got ${JSON.stringify(raw)}`);
  return m[1];
}

/** dryRun: `All`, or present with no value (SPEC query parameters); anything else is 400. */
export function parseDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  if (values.length === 0) return false;
  for (const v of values) {
    if (v !== 'All' && v !== '') throw StatusError.badRequest(`Invalid dryRun value: ${JSON.stringify(v)}: supported values: "All"`);
  }
  return true;
}

/** Parses list/watch query parameters; bad limits are 400. */
export function listOptions(query: URLSearchParams): ListOptions {
  const limitParam = query.get('limit');
  let limit: number | undefined;
  if (limitParam !== null && limitParam !== '') {
    limit = Number(limitParam);
    if (!Number.isInteger(limit) || limit < 0) throw StatusError.badRequest(`invalid limit: ${JSON.stringify(limitParam)}: must be a non-negative integer`);
  }
  return {
    labelSelector: query.get('labelSelector') ?? undefined,
    fieldSelector: query.get('fieldSelector') ?? undefined,
    limit,
    continue: query.get('continue') || undefined,
    resourceVersion: query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: query.get('resourceVersionMatch') || undefined,
  };
}

/** DeleteOptions from the body (JSON/YAML) and the query (query parameters win, as upstream). */
/**
 * upstream Validate{Create,Update,Patch}Options for the field manager: printable and at most
 * 128 bytes; for patches, `force` only with apply, which also needs an explicit fieldManager.
 * Problems are a 422 about the options object.
 */
function checkWriteOptions(kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', query: URLSearchParams, apply = false): void {
  const manager = query.get('fieldManager') ?? '';
  const errs: FieldError[] = [];
  if (kind === 'PatchOptions' && !apply && query.has('force')) errs.push(FieldError.forbidden('force', 'may not be specified for non-apply patch'));
  if (apply && !manager) errs.push(FieldError.required('fieldManager', 'is required for apply patch'));
  errs.push(...validateFieldManager(manager));
  if (errs.length) throw StatusError.invalid(kind, 'meta.orch.io', '', errs);
}

/** A boolean query parameter as Go's strconv.ParseBool reads it (absent or unparsable: false). */
function parseBool(v: string | null): boolean {
  return v !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v);
}

function deleteOptions(req: FastifyRequest, query: URLSearchParams): DeleteOptions {
  let options: DeleteOptions = {};
  const body = req.body as Buffer | undefined;
  if (body && body.length > 0) {
    const { value } = decodeBody(body, req.headers['content-type']);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw StatusError.badRequest('DeleteOptions must be an object');
    options = value as DeleteOptions;
  }
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null) {
    const n = Number(grace);
    if (!Number.isInteger(n)) throw StatusError.badRequest(`invalid gracePeriodSeconds: ${JSON.stringify(grace)}`);
    options.gracePeriodSeconds = n;
  }
  const policy = query.get('propagationPolicy');
  if (policy !== null) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const orphan = query.get('orphanDependents');
  if (orphan !== null) options.orphanDependents = orphan === 'true';
  return options;
}

/** kind and apiVersion, when given, must name the resource's kind (400 otherwise); absent ones are filled in. */
function checkTypeFields(obj: KubeObject, def: ResourceDef): void {
  const want = def.group ? `${def.group}/${def.version}` : def.version;
  if (obj.apiVersion !== undefined && typeof obj.apiVersion !== 'string') throw StatusError.badRequest('apiVersion must be a string');
  if (obj.kind !== undefined && typeof obj.kind !== 'string') throw StatusError.badRequest('kind must be a string');
  if (obj.apiVersion && obj.apiVersion !== want && obj.apiVersion.replace('.k8s.io/', '.orch.io/') !== want) {
    throw StatusError.badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${want})`);
  }
  if (obj.kind && obj.kind !== def.kind) {
    throw StatusError.badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${def.kind})`);
  }
  // Typed clients often send no type fields: the endpoint decides them, as upstream does.
  obj.apiVersion ||= want;
  obj.kind ||= def.kind;
}
