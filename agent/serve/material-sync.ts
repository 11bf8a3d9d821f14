/**
 * Certificate material on the node (issue 10 contract §5): the agent fetches the material of every
 * Certificate its Declaration references (`File.contentFrom`) from the control plane's material endpoint
 * with its node credential, and keeps it in its OWN store — so after an agent restart with the control
 * plane down, the node still writes the same files and serves its routes. `File.contentFrom` is resolved
 * from the store only (a reconcile never waits on the network); a new or renewed material bumps `version()`
 * and calls `onChange` (the agent reconciles: the File driver rewrites the files, the HttpsProxy driver
 * loads them without a restart). Material no longer referenced is dropped from the store.
 */
import type { Client } from '../../api/client/types.ts';
import { ApiError } from '../../api/meta/api-error.ts';
import type { Clock } from '../../api/meta/clock.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import { certificateMaterialPath, parseCertificateMaterial } from '../../api/wire/certificate-material.ts';
import type { ContentResolver } from '../declared-resources.ts';
import type { Logger } from '../engine/types.ts';
import type { AgentStore, HeldMaterial } from '../store/agent-store.ts';
import type { Reachability } from '../sync/reachability.ts';

/** Options of `createMaterialSync`. */
export interface MaterialSyncOptions {
  client: Pick<Client, 'raw'>;
  store: AgentStore;
  reach: Reachability;
  logger: Logger;
  node: string;
  clock: Clock;
  declaration(): Declaration | undefined;
  /** Called after material was stored or dropped. */
  onChange(): void;
}

/** The agent's certificate material: fetched into its store, resolved from it. */
export interface MaterialSync {
  /** Fetches the material of every referenced Certificate; resolves true when the store changed. Never throws. */
  sync(): Promise<boolean>;
  /** Resolves `contentFrom` from the held material (undefined when not held). */
  resolve: ContentResolver;
  /** Goes up whenever the held material changes (so resolved resources are recomputed). */
  version(): number;
  /** What the agent holds: name and notAfter of each Certificate. */
  held(): Array<{ name: string; notAfter: string }>;
}

/** The Certificates a Declaration takes File content from. */
export function referencedCertificates(decl: Declaration | undefined): string[] {
  const names = new Set<string>();
  for (const r of decl?.spec.resources ?? []) {
    if (r.kind === 'File' && r.spec.contentFrom) names.add(r.spec.contentFrom.certificate);
  }
  return [...names].sort();
}

/** Creates the material sync (see the module comment). */
export function createMaterialSync(opts: MaterialSyncOptions): MaterialSync {
  const { store, logger, node } = opts;
  let version = 0;
  let running: Promise<boolean> | undefined;
  const quiet = new Set<string>(); // names whose "not issued yet" was logged already

  /** Fetches one; true when stored anew, false when unchanged or not available, undefined when unreachable. */
  async function fetchOne(name: string): Promise<boolean | undefined> {
    let body: unknown;
    try {
      body = await opts.client.raw(certificateMaterialPath(name));
      opts.reach.succeeded();
    } catch (e) {
      if (opts.reach.failed(e)) return undefined;
      opts.reach.succeeded();
      const code = e instanceof ApiError ? e.code : 0;
      if (code === 404 && quiet.has(name)) return false;
      if (code === 404) quiet.add(name);
      // Not issued yet is the normal order of things (the Files that need it are Waiting), not an error.
      const log = code === 404 ? logger.info.bind(logger) : logger.error.bind(logger);
      log(code === 404 ? 'Found no issued material yet' : 'Failed to fetch certificate material', {
        node,
        certificate: name,
        error: (e as Error).message,
      });
      return false;
    }
    quiet.delete(name);
    const m = parseCertificateMaterial(body);
    const held = store.materials().find((h) => h.name === name);
    if (held && held.cert === m.cert && held.key === m.key && held.ca === m.ca) return false;
    const rec: HeldMaterial = { name, ...m, fetchedAt: new Date(opts.clock.now()).toISOString() };
    await store.saveMaterial(rec);
    logger.info(held ? 'Stored renewed certificate material' : 'Stored certificate material', {
      node,
      certificate: name,
      notAfter: m.notAfter,
    });
    return true;
  }

  async function syncOnce(): Promise<boolean> {
    const wanted = referencedCertificates(opts.declaration());
    let changed = false;
    for (const old of store.materials().filter((h) => !wanted.includes(h.name))) {
      await store.deleteMaterial(old.name);
      logger.info('Dropped certificate material', { node, certificate: old.name });
      changed = true;
    }
    for (const name of wanted) {
      const got = await fetchOne(name).catch((e: unknown) => {
        logger.error('Failed to store certificate material', { node, certificate: name, error: String(e) });
        return false;
      });
      if (got === undefined) break;
      changed ||= got;
    }
    if (changed) {
      version++;
      opts.onChange();
    }
    return changed;
  }

  return {
    sync() {
      running ??= syncOnce().finally(() => {
        running = undefined;
      });
      return running;
    },
    resolve(source) {
      const m = store.materials().find((h) => h.name === source.certificate);
      return m?.[source.key];
    },
    version: () => version,
    held: () => store.materials().map((m) => ({ name: m.name, notAfter: m.notAfter })),
  };
}
