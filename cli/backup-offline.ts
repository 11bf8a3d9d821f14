/**
 * `meshctl backup verify FILE` and `meshctl backup restore FILE --data-dir DIR --node NAME`: offline, with no
 * control plane (api/backup/verify.ts, restore.ts). Built as its own bundle (hack/build.mjs), as `init` is, so
 * that other commands never load the store or the schema validator.
 *
 * The mesh an archive must be of: `--ca-pin`, else the CA of the meshconfig meshctl finds (when there is one).
 * `restore` keeps that meshconfig's admin token when it is this backup's (checked against the archived hash),
 * and prints how to start the control plane on the restored directory and what the restore lost.
 */
import { readFileSync } from 'node:fs';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import type { ClientConfig } from '../api/client/types.ts';
import { restoreArchive } from '../api/backup/restore.ts';
import { verifyArchive } from '../api/backup/verify.ts';
import { caPin } from '../api/meta/ca-pin.ts';
import { humanDuration } from '../api/meta/human-duration.ts';
import type { CommandContext } from './command.ts';
import { findConfigPath } from './config.ts';
import { CliError, EXIT_OK, UsageError } from './errors.ts';

/** Runs `verify` or `restore` (see the file comment). */
export async function offline(ctx: CommandContext, sub: 'verify' | 'restore', rest: string[]): Promise<number> {
  const [file, ...extra] = rest;
  if (!file || extra.length) throw new UsageError(`usage: meshctl backup ${sub} FILE`);
  let archive: Buffer;
  try {
    archive = readFileSync(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const admin = adminConfig(ctx);
  const pin = ctx.args.str('ca-pin') ?? (admin?.caData ? caPin(admin.caData) : undefined);
  try {
    return sub === 'verify' ? await verify(ctx, file, archive, pin) : await restore(ctx, file, archive, pin, admin);
  } catch (e) {
    if (e instanceof Error && e.name === 'BackupError') throw new CliError(`${file}: ${e.message}`);
    throw e;
  }
}

/** The meshconfig meshctl would use, when there is one (offline commands do not need it). */
function adminConfig(ctx: CommandContext): ClientConfig | undefined {
  const path = findConfigPath({ flag: ctx.args.str('config') });
  if (!path) return undefined;
  try {
    return loadMeshconfig(path);
  } catch {
    return undefined;
  }
}

async function verify(ctx: CommandContext, file: string, archive: Buffer, pin: string | undefined): Promise<number> {
  const { manifest: m, how } = await verifyArchive(archive, pin ? { expectCaPin: pin } : {});
  const age = humanDuration(Date.now() - Date.parse(m.createdAt));
  ctx.out(
    `${file}: verified backup ${m.name} of mesh ${m.mesh.caPin}${pin ? '' : ' (mesh not checked: no meshconfig or --ca-pin)'}\n` +
      `  taken ${m.createdAt} (${age} ago) on node ${m.sourceNode ?? '(undeclared)'} at resourceVersion ${m.resourceVersion}\n` +
      `  ${m.objects} objects: ${Object.entries(m.objectCounts)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}\n` +
      (m.recoveryDeadline ? `  recovery deadline then: ${m.recoveryDeadline}\n` : '') +
      `  checked: ${how}\n`,
  );
  return EXIT_OK;
}

async function restore(
  ctx: CommandContext,
  file: string,
  archive: Buffer,
  pin: string | undefined,
  admin: ClientConfig | undefined,
): Promise<number> {
  const dataDir = ctx.args.str('data-dir');
  const node = ctx.args.str('node');
  if (!dataDir || !node)
    throw new UsageError('usage: meshctl backup restore FILE --data-dir DIR --node NAME (DIR new or empty)');
  const r = await restoreArchive({
    archive,
    dataDir,
    ...(pin ? { expectCaPin: pin } : {}),
    ...(admin?.token && pin ? { adminToken: admin.token } : {}),
  });
  ctx.out(
    `${file}: ${r.lost}.\n` +
      `Restored into ${dataDir} (${r.declarations.length} declarations re-issued, so nodes ahead of the backup return to it).\n` +
      `Start the control plane there (it re-declares the control plane for node ${node}):\n` +
      `  mesh-control-plane --data-dir ${dataDir} --node ${node} --restore --listen HOST:PORT\n` +
      `Then point each agent at it: mesh-agent set-server https://HOST:PORT --state-dir DIR (or move the DNS name).\n` +
      (admin?.token && pin
        ? 'The admin token of your meshconfig is kept: change its server URL to the new address.\n'
        : 'A new admin token will be generated: use the admin.meshconfig the control plane writes in the data directory.\n'),
  );
  return EXIT_OK;
}
