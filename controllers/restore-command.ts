/**
 * `mesh-control-plane restore FILE --data-dir DIR --node NAME`: restores a backup archive into a new data
 * directory (api/backup/restore.ts: verified first, all or nothing, Declarations re-issued, the Mesh told), then
 * main.ts serves it as `--restore` does, re-declaring the control plane for this node
 * (check-control-plane-node.ts). `--admin-config` keeps the admin token of that meshconfig (checked against the
 * backup's hash) and, with `--ca-pin`, decides which mesh the archive must be of. What the restore loses — every
 * change after the backup — is logged with the backup's resourceVersion and age.
 */
import { readFileSync } from 'node:fs';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { restoreArchive } from '../api/backup/restore.ts';
import { caPin } from '../api/meta/ca-pin.ts';
import type { Logger } from '../api/meta/logger.ts';

/** What the restore needs. */
export interface RestoreCommandOptions {
  file: string;
  dataDir: string;
  node: string;
  adminConfig?: string;
  caPin?: string;
  logger: Logger;
}

/** Restores FILE into the data directory; throws (the process exits 1) with the reason when refused. */
export async function restoreCommand(o: RestoreCommandOptions): Promise<void> {
  const started = performance.now();
  const admin = o.adminConfig ? loadMeshconfig(o.adminConfig) : undefined;
  const expectCaPin = o.caPin ?? (admin?.caData ? caPin(admin.caData) : undefined);
  const r = await restoreArchive({
    archive: readFileSync(o.file),
    dataDir: o.dataDir,
    ...(expectCaPin ? { expectCaPin } : {}),
    ...(admin?.token ? { adminToken: admin.token } : {}),
  });
  o.logger.info('Restored backup', {
    file: o.file,
    backup: r.manifest.name,
    resourceVersion: r.manifest.resourceVersion,
    takenAt: r.manifest.createdAt,
    ageSeconds: Math.round(r.ageMs / 1000),
    sourceNode: r.manifest.sourceNode,
    node: o.node,
    dataDir: o.dataDir,
    declarationsReissued: r.declarations.length,
    adminToken: admin?.token ? 'kept' : 'a new one will be generated',
    lost: r.lost,
    ms: Math.round(performance.now() - started),
  });
}
