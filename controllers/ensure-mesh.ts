/**
 * Every mesh has its Mesh, the singleton `mesh` that holds the mesh-wide settings. `meshctl init` creates it
 * (with the control-plane and hub node in its status); a control plane started on a store without one — the
 * local mesh (`npm start` runs `mesh-control-plane` directly, not through init), or `mesh-control-plane` run by
 * hand — creates it when it starts, with an empty spec: every setting takes its schema default, and nothing is
 * written into its status. An existing Mesh is never changed. Like the start-up check beside it
 * (check-control-plane-node.ts), this runs on the store this process owns, before the API serves.
 */
import type { Logger } from '../api/meta/logger.ts';
import { API_VERSION } from '../api/meta/types.ts';
import type { Store } from '../api/store/types.ts';

/** The only name a Mesh may have (api/v1alpha1/kinds.ts). */
const MESH_NAME = 'mesh';

/** Creates the Mesh with the defaults when the store has none; leaves an existing one alone. */
export async function ensureMesh(store: Pick<Store, 'get' | 'create'>, logger: Logger): Promise<void> {
  if (store.get('meshes', MESH_NAME)) return;
  await store.create('meshes', { apiVersion: API_VERSION, kind: 'Mesh', metadata: { name: MESH_NAME }, spec: {} });
  logger.info('Created Mesh', { name: MESH_NAME, note: 'the store had none; every setting is its default' });
}
