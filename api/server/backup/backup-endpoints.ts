/**
 * The backup endpoints, admin-only (a node gets 403 whatever its authorizer says: an archive holds the CA key):
 *
 *   POST /apis/meshctl.dev/v1alpha1/backups[?to=DIR]   takes a backup (backup-service.ts) and answers the
 *        Backup (201) once it is verified; the body, optional, is a Backup naming it and its spec.description;
 *        `to` writes the archive to DIR on the control-plane node instead of the backup directory.
 *   GET  /apis/meshctl.dev/v1alpha1/backups/<name>/archive   streams the verified archive (`meshctl backup
 *        create -o FILE`, `backup pull`), with its SHA-256 in `X-Meshctl-Sha256`.
 *
 * Every other backups request (get, list, watch, delete) is the ordinary resource API.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../../meta/api-error.ts';
import { errnoCode } from '../../meta/errno.ts';
import { forbidden } from '../access/auth.ts';
import { bodyFormat, parseBody, readBody } from '../http/body.ts';
import { requireMethod, sendJson } from '../http/respond.ts';
import type { Route } from '../http/routes.ts';
import type { Store } from '../../store/types.ts';
import type { BackupService, TakeRequest } from './backup-service.ts';
import type { Backup } from '../../v1alpha1/generated/index.ts';
import type { ResourceCall } from '../resources/resource-router.ts';

/** A request the dispatcher routed to `backups`: a resource call, with the store and the body limit. */
export interface BackupCall extends ResourceCall {
  store: Store;
  maxBodyBytes: number;
}

/**
 * Whether a backups request is one of these endpoints (rather than the resource API). A create with `?dryRun`
 * (`meshctl diff`, `kubectl apply --dry-run=server`) is the resource API's: it validates and takes nothing.
 */
export function isBackupEndpoint(route: Extract<Route, { type: 'resource' }>, method: string, url: URL): boolean {
  if (route.plural !== 'backups' || route.watchPath) return false;
  const create = route.name === undefined && method === 'POST' && !url.searchParams.has('dryRun');
  return create || route.subresource === 'archive';
}

/** Serves a backup endpoint (see the file comment). */
export function serveBackupEndpoint(service: BackupService, c: BackupCall): Promise<void> {
  const create = c.route.name === undefined;
  const attrs = create
    ? { verb: 'create' as const, plural: 'backups', path: c.url.pathname }
    : { verb: 'get' as const, plural: 'backups', name: c.route.name, subresource: 'archive', path: c.url.pathname };
  if (c.identity.kind !== 'admin') throw forbidden(c.identity, attrs, 'backups are for the admin only');
  if (create) return createBackup(service, c);
  requireMethod(c.res, c.method, ['GET']);
  return streamArchive(c, c.route.name ?? '');
}

async function createBackup(service: BackupService, c: BackupCall): Promise<void> {
  const buf = await readBody(c.req, c.maxBodyBytes);
  const req: TakeRequest = {};
  if (buf.length) {
    const format = bodyFormat(c.req.headers['content-type'], ['json', 'yaml']);
    if (!format) throw new ApiError({ reason: 'UnsupportedMediaType', message: 'the body must be JSON or YAML' });
    const body = parseBody(buf, format) as Partial<Backup>;
    const m = body.metadata ?? {};
    if (m.name !== undefined) req.name = String(m.name);
    if (m.labels) req.labels = m.labels;
    if (m.annotations) req.annotations = m.annotations;
    if (body.spec?.description !== undefined) req.description = String(body.spec.description);
  }
  const to = c.url.searchParams.get('to') || undefined;
  if (to !== undefined) req.dir = to;
  const backup = await service.take(req);
  sendJson(c.res, 201, backup);
}

async function streamArchive(c: BackupCall, name: string): Promise<void> {
  const backup = c.store.get('backups', name);
  if (!backup) throw ApiError.notFound('backups', name);
  const file = backup.status?.file;
  if (!backup.status?.verified || !file)
    throw ApiError.badRequest(`backup ${name} was not verified: it has no archive to pull`);
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw e;
    throw new ApiError({ reason: 'NotFound', message: `the archive of backup ${name} is gone from ${file}` });
  }
  c.res.writeHead(200, {
    'Content-Type': 'application/octet-stream',
    'Content-Length': String(size),
    'X-Meshctl-Sha256': backup.status.sha256 ?? '',
  });
  await pipeline(createReadStream(file), c.res);
}
